import type { NormalizedRecord, ObservationRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, isObject, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { iso } from '../../shared/providerTimes.js';
import { DIASTOLIC, MEASURE_TYPES, REAL_MEASUREMENT, SYSTOLIC, USER_ENTERED_ATTRIBS } from './measureTypes.js';
import { withingsProvenance } from './provenance.js';
import { epochSeconds, scaled } from './withingsAnswer.js';

/**
 * One measure group of `getmeas` (a weigh-in, a blood pressure reading): each measure of a known
 * type becomes a quantity sample at the group's `date`; systolic and diastolic together also form
 * one blood pressure observation. Goals (category 2) are not readings and give nothing.
 */
export function decodeMeasureGroup(grp: Json, body: Json): NormalizedRecord[] {
  if (grp.category !== undefined && grp.category !== REAL_MEASUREMENT) return [];
  const grpid = grp.grpid;
  if (typeof grpid !== 'number' && typeof grpid !== 'string') throw new RecordError('grpid is missing');
  const at = epochSeconds(grp.date, 'date');
  if (!Array.isArray(grp.measures)) throw new RecordError('measures is missing or not an array');
  const timezone = typeof grp.timezone === 'string' ? grp.timezone : typeof body.timezone === 'string' ? body.timezone : null;
  const device = typeof grp.model === 'string' && grp.model ? grp.model : null;
  const p = withingsProvenance(device, false);
  const userEntered = typeof grp.attrib === 'number' && USER_ENTERED_ATTRIBS.has(grp.attrib);
  const metadata = { ...fieldsExcept(grp, ['measures', 'timezone']), timezone };
  const out: NormalizedRecord[] = [];
  const values = new Map<number, number>();
  grp.measures.forEach((m: unknown, i: number) => {
    if (!isObject(m)) throw new RecordError(`measures[${i}] is not an object`);
    if (typeof m.type !== 'number') throw new RecordError(`measures[${i}].type is missing`);
    const spec = MEASURE_TYPES[m.type];
    if (!spec) return;
    const value = scaled(m.value, m.unit, `measures[${i}]`);
    if (value < spec.min || value > spec.max) throw new RecordError(`measures[${i}] ${spec.type} ${value} ${spec.unit} is outside ${spec.min}..${spec.max}`);
    values.set(m.type, value);
    out.push(
      quantity(p, {
        external_id: `meas-${grpid}-${m.type}`,
        type: spec.type,
        value,
        unit: spec.unit,
        start: at,
        end: at,
        metadata: { ...metadata, meastype: m.type, ...(m.algo !== undefined ? { algo: m.algo } : {}), ...(m.fm !== undefined ? { fm: m.fm } : {}) },
        was_user_entered: userEntered,
      }),
    );
  });
  const sys = values.get(SYSTOLIC);
  const dia = values.get(DIASTOLIC);
  if (sys !== undefined && dia !== undefined) {
    const bp: ObservationRecord = {
      kind: 'observation',
      ...p,
      external_id: `meas-${grpid}-bp`,
      code: 'blood_pressure',
      loinc_code: '85354-9',
      start_date: iso(at),
      end_date: iso(at),
      components: [
        { code: 'systolic', loinc_code: '8480-6', value: sys, unit: 'mmHg' },
        { code: 'diastolic', loinc_code: '8462-4', value: dia, unit: 'mmHg' },
      ],
      metadata,
    };
    out.unshift(bp);
  }
  return out;
}
