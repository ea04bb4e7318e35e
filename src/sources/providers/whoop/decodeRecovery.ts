import type { NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { optionalString, quantity, RecordError, requiredNumber, type Json } from '../../shared/connectorRecords.js';
import { readInstant } from '../../shared/providerTimes.js';
import { amount, scoreOf } from './whoopFields.js';

/**
 * A WHOOP recovery, scored from the sleep that ends a cycle: recovery score (0-100, stored as
 * readiness_score), resting heart rate, HRV as RMSSD (`hrv_rmssd_milli`, ms), and on 4.0 straps
 * SpO2 (%) and skin temperature (°C, stored as sleeping_wrist_temperature). A recovery has no
 * time of its own: its samples are dated `created_at`, when WHOOP scored it on waking.
 */
export function decodeRecovery(doc: Json, p: Provenance): NormalizedRecord[] {
  const cycle = requiredNumber(doc.cycle_id, 'cycle_id');
  const at = readInstant(doc.created_at, 'created_at').ms;
  const score = scoreOf(doc);
  if (!score) return [];
  // A UUID in v2; v1 answered an integer.
  const sleepId = typeof doc.sleep_id === 'number' ? String(doc.sleep_id) : optionalString(doc.sleep_id, 'sleep_id');
  const metadata = { cycle_id: cycle, sleep_id: sleepId, user_calibrating: score.user_calibrating ?? null, score_state: doc.score_state };
  const ext = `recovery:${cycle}`;
  const out: NormalizedRecord[] = [];
  const add = (field: string, type: string, unit: string, range: [number, number]) => {
    const v = amount(score, field, `score.${field}`);
    if (v === null) return;
    if (v < range[0] || v > range[1]) throw new RecordError(`score.${field} ${v} is outside ${range[0]}..${range[1]}`);
    out.push(quantity(p, { external_id: `${ext}:${type}`, type, value: v, unit, start: at, end: at, metadata }));
  };
  add('recovery_score', 'readiness_score', 'count', [0, 100]);
  add('resting_heart_rate', 'resting_heart_rate', 'count/min', [20, 200]);
  add('hrv_rmssd_milli', 'hrv_rmssd', 'ms', [1, 400]);
  add('spo2_percentage', 'oxygen_saturation', '%', [50, 100]);
  add('skin_temp_celsius', 'sleeping_wrist_temperature', 'degC', [20, 45]);
  return out;
}
