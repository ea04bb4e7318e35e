import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { readInstant } from '../../shared/providerTimes.js';
import { DELIVERY_FIELDS, polarProvenance } from './polarTimes.js';

/**
 * Physical information as the user keeps it in Polar Flow: weight (kg), height (cm), resting
 * heart rate and VO2max, each a sample at `created`. Weight is user-entered unless Polar says it
 * was measured (`weight-source` SOURCE_MEASURED); the other settings are typed in or estimated by
 * Polar's fitness test, never read from a worn sensor at that moment.
 */
const FIELDS: readonly { field: string; type: string; unit: string; min: number; max: number }[] = [
  { field: 'weight', type: 'body_mass', unit: 'kg', min: 1, max: 600 },
  { field: 'height', type: 'height', unit: 'cm', min: 30, max: 280 },
  { field: 'resting-heart-rate', type: 'resting_heart_rate', unit: 'count/min', min: 20, max: 200 },
  { field: 'vo2-max', type: 'vo2_max', unit: 'mL/(kg*min)', min: 5, max: 100 },
];

export function decodePhysicalInformation(info: Json): NormalizedRecord[] {
  const id = info.id;
  if (typeof id !== 'number' && typeof id !== 'string') throw new RecordError('id is missing');
  const at = readInstant(info.created, 'created');
  const p = polarProvenance(null, false);
  const metadata = { ...fieldsExcept(info, [...DELIVERY_FIELDS, ...FIELDS.map((f) => f.field)]), timezone: null };
  const out: NormalizedRecord[] = [];
  for (const f of FIELDS) {
    const v = optionalNumber(info[f.field], f.field);
    if (!v) continue;
    if (v < f.min || v > f.max) throw new RecordError(`${f.field} ${v} is outside ${f.min}..${f.max}`);
    const entered = f.field === 'weight' ? info['weight-source'] !== 'SOURCE_MEASURED' : true;
    out.push(quantity(p, { external_id: `physical-${id}-${f.field}`, type: f.type, value: v, unit: f.unit, start: at.ms, end: at.ms, metadata, was_user_entered: entered }));
  }
  return out;
}
