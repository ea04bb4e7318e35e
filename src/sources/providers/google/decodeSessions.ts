import type { NormalizedRecord, Provenance, SleepPhase, SleepSessionRecord, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { asleepOf, phaseTotals } from '../../derivations/sleepSessions.js';
import { RecordError, type Json } from '../../shared/connectorRecords.js';
import { iso, readInstant } from '../../shared/providerTimes.js';
import { isObject } from '../../shared/recordError.js';
import { sourceOf } from './decodeQuantities.js';
import { durationSeconds, optionalNumberOf, readInterval } from './googleTimes.js';

/** Google's sleep stage names → the service's phases. */
const STAGES: Readonly<Record<string, SleepPhase['phase']>> = { AWAKE: 'awake', LIGHT: 'light', DEEP: 'deep', REM: 'rem', ASLEEP: 'asleep' };

/** Google's exercise types → the canonical workout types (anything else: other, the type kept in metadata). */
const EXERCISES: Readonly<Record<string, string>> = {
  RUNNING: 'running',
  WALKING: 'walking',
  HIKING: 'hiking',
  BIKING: 'cycling',
  CYCLING: 'cycling',
  SWIMMING: 'swimming',
  STRENGTH_TRAINING: 'strength_training',
  WEIGHTLIFTING: 'strength_training',
  YOGA: 'yoga',
  ELLIPTICAL: 'elliptical',
  ROWING: 'rowing',
};

const nameOf = (point: Json): string => {
  if (typeof point.name !== 'string' || !point.name) throw new RecordError('name is missing');
  return point.name;
};

/**
 * A sleep data point: its interval is the time in bed, `stages` its stretches (AWAKE, LIGHT, DEEP,
 * REM). Totals are summed from the stages; a sleep without stages counts its whole interval asleep.
 */
export function decodeSleep(point: Json, p: Provenance): NormalizedRecord[] {
  const sleep = point.sleep;
  if (!isObject(sleep)) throw new RecordError('no sleep in the data point');
  const { start, end } = readInterval(sleep.interval);
  const list = Array.isArray(sleep.stages) ? sleep.stages : [];
  if (list.length > 5000) throw new RecordError('more than 5000 sleep stages');
  const stretches = list.map((s, i) => {
    if (!isObject(s)) throw new RecordError(`stages[${i}] is not an object`);
    const phase = typeof s.type === 'string' ? STAGES[s.type] : undefined;
    if (!phase) throw new RecordError(`stages[${i}].type ${JSON.stringify(s.type)} is not a sleep stage`);
    const a = readInstant(s.startTime, `stages[${i}].startTime`).ms;
    const b = readInstant(s.endTime, `stages[${i}].endTime`).ms;
    if (b <= a || a < start.ms || b > end.ms) throw new RecordError(`stages[${i}] lies outside the sleep or ends before it starts`);
    return { phase, start: a, end: b };
  });
  const seconds = phaseTotals(stretches, 1000);
  const staged = stretches.length > 0;
  const source = sourceOf(point, p);
  const record: SleepSessionRecord = {
    kind: 'sleep_session',
    ...source.provenance,
    external_id: nameOf(point),
    bedtime_start: iso(start.ms),
    bedtime_end: iso(end.ms),
    total_sleep_seconds: Math.round(staged ? asleepOf(seconds) : (end.ms - start.ms) / 1000),
    deep_sleep_seconds: Math.round(seconds.deep),
    rem_sleep_seconds: Math.round(seconds.rem),
    light_sleep_seconds: Math.round(seconds.light),
    awake_seconds: Math.round(seconds.awake),
    sleep_score: null,
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: null,
    spo2_avg: null,
    phases: stretches.map((s) => ({ phase: s.phase, start_date: iso(s.start), end_date: iso(s.end) })),
    metadata: { ...source.metadata, timezone: start.offset, ...(end.offset !== start.offset ? { end_timezone: end.offset } : {}) },
  };
  return [record];
}

/** An exercise session: its interval, type, and the summary metrics Google computed for it. */
export function decodeExercise(point: Json, p: Provenance): NormalizedRecord[] {
  const ex = point.exercise;
  if (!isObject(ex)) throw new RecordError('no exercise in the data point');
  const { start, end } = readInterval(ex.interval);
  const sent = typeof ex.exerciseType === 'string' ? ex.exerciseType : 'UNKNOWN';
  const m = isObject(ex.metricsSummary) ? ex.metricsSummary : {};
  const active = durationSeconds(ex.activeDuration, 'activeDuration');
  const distanceMm = optionalNumberOf(m.distanceMillimeters, 'metricsSummary.distanceMillimeters');
  const source = sourceOf(point, p);
  const record: WorkoutRecord = {
    kind: 'workout',
    ...source.provenance,
    external_id: nameOf(point),
    type: EXERCISES[sent] ?? 'other',
    start_date: iso(start.ms),
    end_date: iso(end.ms),
    duration_s: Math.round(active ?? (end.ms - start.ms) / 1000),
    active_energy_kcal: optionalNumberOf(m.caloriesKcal, 'metricsSummary.caloriesKcal'),
    distance_m: distanceMm === null ? null : distanceMm / 1000,
    avg_heart_rate: optionalNumberOf(m.averageHeartRateBeatsPerMinute, 'metricsSummary.averageHeartRateBeatsPerMinute'),
    max_heart_rate: null,
    steps: optionalNumberOf(m.steps, 'metricsSummary.steps'),
    route: [],
    metadata: { ...source.metadata, exercise_type: sent, display_name: typeof ex.displayName === 'string' ? ex.displayName.slice(0, 200) : null, timezone: start.offset },
  };
  return [record];
}
