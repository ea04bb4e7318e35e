import type { DailySummaryRecord, NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, isObject, optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { readDate } from '../../shared/providerTimes.js';
import { isoDurationSeconds } from './isoDuration.js';
import { clockOn, DELIVERY_FIELDS, fixedZone, polarProvenance } from './polarTimes.js';

/**
 * A day of daily activity: `active-steps` and `active-calories` are the day's steps and activity
 * energy, `calories` the day's total (kept in metadata). Polar offers a day again in a later
 * transaction while it changes; the same date keeps one record.
 */
export function decodeActivityDay(a: Json): DailySummaryRecord[] {
  const date = readDate(a.date, 'date');
  const steps = optionalNumber(a['active-steps'], 'active-steps');
  const active = optionalNumber(a['active-calories'], 'active-calories');
  if ((steps ?? 0) < 0 || (active ?? 0) < 0) throw new RecordError('active-steps or active-calories is negative');
  const activeSeconds = a.duration === undefined || a.duration === null ? null : isoDurationSeconds(a.duration, 'duration');
  return [
    {
      kind: 'daily_summary',
      ...polarProvenance(null),
      external_id: `activity-${date}`,
      date,
      steps: steps === null ? null : Math.round(steps),
      active_energy_kcal: active,
      distance_m: null,
      resting_heart_rate: null,
      avg_heart_rate: null,
      sleep_seconds: null,
      metadata: { ...fieldsExcept(a, ['date', 'active-steps', 'active-calories', ...DELIVERY_FIELDS]), ...(activeSeconds !== null ? { active_seconds: activeSeconds } : {}), timezone: null },
    },
  ];
}

/**
 * A day's step samples, stored as `{date, offset, answer}`: Polar's samples carry local clock
 * times only; `offset` is what the pull learnt for that day from the user's nights or exercises.
 * Each sample with steps becomes a step_count sample over its interval (`interval` minutes, else
 * up to the next sample). A day without a known offset is rejected, not placed at a guess.
 */
export function decodeStepSamples(doc: Json): NormalizedRecord[] {
  const date = readDate(doc.date, 'date');
  if (typeof doc.offset !== 'string') throw new RecordError(`no zone offset is known for ${date}`);
  const answer = doc.answer;
  if (!isObject(answer) || !Array.isArray(answer.samples)) throw new RecordError('answer has no samples array');
  const zone = fixedZone(doc.offset);
  const interval = optionalNumber(answer.interval, 'interval');
  const samples = answer.samples;
  const times = samples.map((s: unknown, i: number) => {
    if (!isObject(s) || typeof s.time !== 'string') throw new RecordError(`samples[${i}].time is missing`);
    return clockOn(date, s.time, zone, `samples[${i}].time`);
  });
  const p = polarProvenance(null);
  const out: NormalizedRecord[] = [];
  samples.forEach((s: Json, i: number) => {
    const steps = optionalNumber(s.steps, `samples[${i}].steps`);
    if (!steps) return;
    if (steps < 0) throw new RecordError(`samples[${i}].steps is negative`);
    const start = times[i]!;
    const end = interval && interval > 0 ? start + interval * 60_000 : (times[i + 1] ?? start + 60_000);
    out.push(quantity(p, { external_id: `steps-${date}-${s.time}`, type: 'step_count', value: steps, unit: 'count', start, end: Math.max(end, start), metadata: { timezone: doc.offset } }));
  });
  return out;
}
