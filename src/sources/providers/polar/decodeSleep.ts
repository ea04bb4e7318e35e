import type { NormalizedRecord, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { fieldsExcept, isObject, optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { iso, localDateOf, readDate, readInstant } from '../../shared/providerTimes.js';
import { fixedZone, nightClock, polarProvenance } from './polarTimes.js';
import { HYPNOGRAM_PHASES } from './sports.js';

/**
 * One night of `GET /v3/users/sleep`: a sleep session whose start and end carry the user's
 * offset, stage durations in seconds (unrecognised stage counts as asleep), interruptions as
 * awake, the hypnogram as phases (each runs to the next key, the last to the end of sleep), and
 * the night's heart rate samples as heart_rate samples.
 */
export function decodeNight(n: Json): NormalizedRecord[] {
  const date = readDate(n.date, 'date');
  const start = readInstant(n.sleep_start_time, 'sleep_start_time');
  const end = readInstant(n.sleep_end_time, 'sleep_end_time');
  if (end.ms <= start.ms) throw new RecordError('sleep_end_time is not after sleep_start_time');
  const sec = (f: string) => {
    const v = optionalNumber(n[f], f);
    if (v !== null && (v < 0 || v > 86_400)) throw new RecordError(`${f} ${v} is not a duration of a night in seconds`);
    return v ?? 0;
  };
  const [light, deep, rem, unknown, interruptions] = [sec('light_sleep'), sec('deep_sleep'), sec('rem_sleep'), sec('unrecognized_sleep_stage'), sec('total_interruption_duration')];
  const zone = fixedZone(start.offset);
  const firstDate = localDateOf(start.ms, start.offset);
  const phases: SleepPhase[] = [];
  if (n.hypnogram !== undefined && n.hypnogram !== null) {
    if (!isObject(n.hypnogram)) throw new RecordError('hypnogram is not an object');
    const keys = Object.keys(n.hypnogram);
    const times = nightClock(firstDate, keys, zone, 'hypnogram');
    keys.forEach((k, i) => {
      const phase = HYPNOGRAM_PHASES[(n.hypnogram as Json)[k] as number];
      if (!phase) throw new RecordError(`hypnogram ${k} ${JSON.stringify((n.hypnogram as Json)[k])} is not a Polar sleep stage`);
      const from = Math.max(times[i]!, start.ms);
      const to = Math.min(times[i + 1] ?? end.ms, end.ms);
      if (to > from) phases.push({ phase, start_date: iso(from), end_date: iso(to) });
    });
  }
  const p = polarProvenance(null);
  const metadata = { ...fieldsExcept(n, ['hypnogram', 'heart_rate_samples', 'sleep_start_time', 'sleep_end_time']), timezone: start.offset };
  const session: SleepSessionRecord = {
    kind: 'sleep_session',
    ...p,
    external_id: `sleep-${date}`,
    bedtime_start: iso(start.ms),
    bedtime_end: iso(end.ms),
    total_sleep_seconds: Math.round(light + deep + rem + unknown),
    deep_sleep_seconds: Math.round(deep),
    rem_sleep_seconds: Math.round(rem),
    light_sleep_seconds: Math.round(light),
    awake_seconds: Math.round(interruptions),
    sleep_score: optionalNumber(n.sleep_score, 'sleep_score'),
    // Polar gives the night's HRV and breathing in Nightly Recharge, decoded on their own.
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: null,
    spo2_avg: null,
    phases,
    metadata,
  };
  const out: NormalizedRecord[] = [session];
  if (n.heart_rate_samples !== undefined && n.heart_rate_samples !== null) {
    if (!isObject(n.heart_rate_samples)) throw new RecordError('heart_rate_samples is not an object');
    const hr = n.heart_rate_samples;
    const keys = Object.keys(hr);
    const times = nightClock(firstDate, keys, zone, 'heart_rate_samples');
    keys.forEach((k, i) => {
      const bpm = optionalNumber(hr[k], `heart_rate_samples ${k}`);
      if (!bpm) return;
      if (bpm > 300) throw new RecordError(`heart_rate_samples ${k} ${bpm} is not a heart rate`);
      out.push(quantity(p, { external_id: `sleep-${date}-hr-${k}`, type: 'heart_rate', value: bpm, unit: 'count/min', start: times[i]!, end: times[i]!, metadata: { timezone: start.offset, context: 'sleep' } }));
    });
  }
  return out;
}

/**
 * One night of Nightly Recharge, stored with the offsets the pull learnt from the nights
 * (`{offsets, answer}`): the night's HRV (Polar's `heart_rate_variability_avg` is RMSSD, in ms)
 * and breathing rate, over the span of the night's 5-minute samples. A night whose offset is not
 * known is rejected rather than placed at a guessed time.
 */
export function decodeRecharge(r: Json, offsets: Json): NormalizedRecord[] {
  const date = readDate(r.date, 'date');
  const offset = offsets[date];
  if (typeof offset !== 'string') throw new RecordError(`no zone offset is known for the night of ${date} (no sleep of that night was pulled)`);
  const zone = fixedZone(offset);
  const span = (samples: unknown, field: string): [number, number] | null => {
    if (samples === undefined || samples === null) return null;
    if (!isObject(samples)) throw new RecordError(`${field} is not an object`);
    const keys = Object.keys(samples);
    if (!keys.length) return null;
    // The samples run through the night that ends on `date`: evening keys are the day before.
    const first = keys[0]!;
    const startsEvening = Number(first.slice(0, 2)) >= 12;
    const times = nightClock(startsEvening ? previousDate(date) : date, keys, zone, field);
    return [Math.min(...times), Math.max(...times)];
  };
  const hrvSpan = span(r.hrv_samples, 'hrv_samples');
  const breathingSpan = span(r.breathing_samples, 'breathing_samples') ?? hrvSpan;
  const p = polarProvenance(null);
  const metadata = { ...fieldsExcept(r, ['hrv_samples', 'breathing_samples']), timezone: offset };
  const out: NormalizedRecord[] = [];
  const hrv = optionalNumber(r.heart_rate_variability_avg, 'heart_rate_variability_avg');
  if (hrv && hrvSpan) out.push(quantity(p, { external_id: `recharge-${date}-hrv`, type: 'hrv_rmssd', value: hrv, unit: 'ms', start: hrvSpan[0], end: hrvSpan[1], metadata }));
  const breathing = optionalNumber(r.breathing_rate_avg, 'breathing_rate_avg');
  if (breathing && breathingSpan) out.push(quantity(p, { external_id: `recharge-${date}-breathing`, type: 'respiratory_rate', value: breathing, unit: 'count/min', start: breathingSpan[0], end: breathingSpan[1], metadata }));
  return out;
}

const previousDate = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
