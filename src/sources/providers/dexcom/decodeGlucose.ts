import type { NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { GLUCOSE_MOLAR_MASS, molarConverter } from '../../../catalog/units.js';
import { fieldsExcept, optionalString, quantity, RecordError, requiredNumber, requiredString, type Json } from '../../shared/connectorRecords.js';
import { localOffset, readSystemTime } from './dexcomTimes.js';

/** The glucose units Dexcom's records name, as UCUM. `unknown` is refused. */
const UNITS: Readonly<Record<string, string>> = { 'mg/dL': 'mg/dL', 'mmol/L': 'mmol/L' };

/**
 * One glucose value of Dexcom in the catalog's storage unit (mg/dL), the value and unit as sent
 * kept in `original_value`/`original_unit`. mmol/L converts through glucose's molar mass.
 */
export function glucose(p: Provenance, doc: Json, kind: 'egv' | 'calibration', extra: { wasUserEntered: boolean }): NormalizedRecord[] {
  const recordId = requiredString(doc.recordId, 'recordId');
  const t = readSystemTime(doc.systemTime);
  const value = requiredNumber(doc.value, 'value');
  const unitSent = requiredString(doc.unit, 'unit');
  const unit = UNITS[unitSent];
  if (!unit) throw new RecordError(`unit ${JSON.stringify(unitSent).slice(0, 32)} is not mg/dL or mmol/L`);
  if (value <= 0) throw new RecordError(`value ${value} is not a glucose value`);
  const offset = localOffset(t.ms, doc.displayTime);
  const metadata = { ...fieldsExcept(doc, ['value', 'unit']), record_type: kind, ...(offset ? { timezone: offset } : {}) };
  const spec = { external_id: `${kind}:${recordId}`, type: 'blood_glucose', start: t.ms, end: t.ms, metadata, was_user_entered: extra.wasUserEntered };
  if (unit === 'mg/dL') return [quantity(p, { ...spec, value, unit })];
  const toMgDl = molarConverter('mmol/L', 'mg/dL', GLUCOSE_MOLAR_MASS);
  if (!toMgDl) throw new RecordError('cannot convert mmol/L to mg/dL');
  const record = quantity(p, { ...spec, value: Number(toMgDl(value).toPrecision(12)), unit: 'mg/dL' });
  return [{ ...record, metadata: { ...record.metadata, original_value: value, original_unit: unit } }];
}

/**
 * An estimated glucose value (`/v3/users/self/egvs`, one every five minutes): a blood_glucose
 * sample at `systemTime`. A record whose `value` is null (the sensor gave none: warm-up, error)
 * is no sample and decodes to nothing; `status` high/low (off the sensor's scale) stays in metadata.
 */
export function decodeEgv(doc: Json, p: Provenance): NormalizedRecord[] {
  if (doc.value === null) return [];
  return glucose(withDevice(p, doc), doc, 'egv', { wasUserEntered: false });
}

/** A calibration (`/v3/users/self/calibrations`): the fingerstick value the user entered, a blood_glucose sample entered by the user. */
export function decodeCalibration(doc: Json, p: Provenance): NormalizedRecord[] {
  return glucose(withDevice(p, doc), doc, 'calibration', { wasUserEntered: true });
}

/** The sensor generation names the device (`g6`, `g7`), where the record says it. */
function withDevice(p: Provenance, doc: Json): Provenance {
  const generation = optionalString(doc.transmitterGeneration, 'transmitterGeneration');
  return generation && generation !== 'unknown' ? { ...p, device: `Dexcom ${generation.toUpperCase()}` } : p;
}
