import type { NormalizedRecord, Provenance, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { isObject, quantity, RecordError, requiredString, type Json } from '../../shared/connectorRecords.js';
import { iso } from '../../shared/providerTimes.js';
import { amount, scoreOf, secondsOf, spanOf } from './whoopFields.js';

/**
 * A WHOOP sleep (or nap): stage totals in milliseconds (`stage_summary`: light, slow wave = deep,
 * REM, awake), no hypnogram. Sleep performance (sleep achieved against sleep needed, %) is
 * WHOOP's headline sleep figure: it is the session's sleep_score and, for a night's sleep (not a
 * nap), a sleep_score sample as Oura's is. A sleep is stored once WHOOP has scored it.
 */
export function decodeSleep(doc: Json, p: Provenance): NormalizedRecord[] {
  const id = typeof doc.id === 'number' ? String(doc.id) : requiredString(doc.id, 'id');
  const span = spanOf(doc);
  if (!span.end) return []; // still asleep
  if (span.end.ms <= span.start.ms) throw new RecordError('end is not after start');
  const score = scoreOf(doc);
  if (!score) return [];
  const stages = score.stage_summary;
  if (!isObject(stages)) throw new RecordError('score.stage_summary is missing');
  const ms = (f: string) => amount(stages, f, `score.stage_summary.${f}`);
  const light = secondsOf(ms('total_light_sleep_time_milli'));
  const deep = secondsOf(ms('total_slow_wave_sleep_time_milli'));
  const rem = secondsOf(ms('total_rem_sleep_time_milli'));
  const performance = amount(score, 'sleep_performance_percentage', 'score.sleep_performance_percentage');
  const respiratory = amount(score, 'respiratory_rate', 'score.respiratory_rate');
  const nap = doc.nap === true;
  const ext = `sleep:${id}`;
  const session: SleepSessionRecord = {
    kind: 'sleep_session',
    ...p,
    external_id: ext,
    bedtime_start: iso(span.start.ms),
    bedtime_end: iso(span.end.ms),
    total_sleep_seconds: light + deep + rem,
    deep_sleep_seconds: deep,
    rem_sleep_seconds: rem,
    light_sleep_seconds: light,
    awake_seconds: secondsOf(ms('total_awake_time_milli')),
    sleep_score: performance,
    // WHOOP's HRV and resting heart rate of the night are the recovery's.
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: respiratory,
    spo2_avg: null,
    phases: [],
    metadata: {
      sleep_id: id,
      cycle_id: doc.cycle_id ?? null,
      nap,
      in_bed_seconds: secondsOf(ms('total_in_bed_time_milli')),
      no_data_seconds: secondsOf(ms('total_no_data_time_milli')),
      sleep_cycle_count: stages.sleep_cycle_count ?? null,
      disturbance_count: stages.disturbance_count ?? null,
      sleep_needed: score.sleep_needed ?? null,
      sleep_consistency_percentage: score.sleep_consistency_percentage ?? null,
      sleep_efficiency_percentage: score.sleep_efficiency_percentage ?? null,
      ...span.zone,
    },
  };
  const out: NormalizedRecord[] = [session];
  if (!nap) {
    const night = { start: span.start.ms, end: span.end.ms, metadata: { ...span.zone, sleep_id: id } };
    if (performance !== null) out.push(quantity(p, { ...night, start: span.end.ms, external_id: `${ext}:sleep_score`, type: 'sleep_score', value: performance, unit: 'count' }));
    if (respiratory !== null) out.push(quantity(p, { ...night, external_id: `${ext}:respiratory_rate`, type: 'respiratory_rate', value: respiratory, unit: 'count/min' }));
  }
  return out;
}
