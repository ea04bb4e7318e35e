import type { DailySummaryRecord, Metadata, ParseItem, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { iso, readDate, readInstant } from '../../shared/providerTimes.js';
import { zonedInstant, zonedOffset, type LocalZone } from '../../shared/zonedLocalTime.js';
import { arrayAt, each, num, objectAt, PROVIDER, requireNum, zoneMetadata } from './fitbitPayload.js';
import { DISTANCE_METRES, fitbitActivityType } from './vocabulary.js';

/**
 * The day's activity summary (`/1/user/-/activities/date/{date}.json`). The date is not in the
 * answer: the envelope's `date` names it. Distances are kilometres (metric: no locale asked).
 * Active energy is the day's calories out above the basal rate, as the other sources count it.
 */
export function decodeActivitySummary(answer: unknown, date: unknown, zone: LocalZone): ParseItem[] {
  const day = readDate(date, 'date');
  const summary = objectAt(objectAt(answer, 'answer').summary, 'summary');
  const total = arrayAt(summary.distances, 'summary.distances').find((d) => isObject(d) && d.activity === 'total') as Json | undefined;
  const km = total ? num(total.distance, 'distances.total') : null;
  const out = num(summary.caloriesOut, 'summary.caloriesOut');
  const bmr = num(summary.caloriesBMR, 'summary.caloriesBMR');
  const activity = num(summary.activityCalories, 'summary.activityCalories');
  const active = out !== null && bmr !== null ? Math.max(0, out - bmr) : activity;
  const midnight = zonedInstant(day, zone, 'date');
  const record: DailySummaryRecord = {
    kind: 'daily_summary',
    provider: PROVIDER,
    source: PROVIDER,
    device: null,
    body_worn: true,
    external_id: `daily:${day}`,
    date: day,
    steps: num(summary.steps, 'summary.steps'),
    active_energy_kcal: active,
    distance_m: km === null ? null : Math.round(km * 1000 * 10) / 10,
    resting_heart_rate: num(summary.restingHeartRate, 'summary.restingHeartRate'),
    avg_heart_rate: null,
    sleep_seconds: null,
    metadata: {
      ...zoneMetadata(zone, midnight),
      calories_out: out,
      calories_bmr: bmr,
      activity_calories: activity,
      floors: num(summary.floors, 'summary.floors'),
      sedentary_minutes: num(summary.sedentaryMinutes, 'summary.sedentaryMinutes'),
      lightly_active_minutes: num(summary.lightlyActiveMinutes, 'summary.lightlyActiveMinutes'),
      fairly_active_minutes: num(summary.fairlyActiveMinutes, 'summary.fairlyActiveMinutes'),
      very_active_minutes: num(summary.veryActiveMinutes, 'summary.veryActiveMinutes'),
    },
  };
  return [{ record }];
}

/**
 * A page of the activity log list (`/1/user/-/activities/list.json`): each log is a workout. Its
 * `startTime` carries the offset (unlike Fitbit's other times); `duration` and `activeDuration`
 * are milliseconds; `distance` is in `distanceUnit`. Logs made by hand have `logType: manual`.
 */
export function decodeActivityLogs(answer: unknown, zone: LocalZone): ParseItem[] {
  const logs = arrayAt(objectAt(answer, 'answer').activities, 'activities');
  return logs.flatMap((log, i) => each(`activities[${i}]`, log, () => [{ record: workout(objectAt(log, `activities[${i}]`), zone) }]));
}

function workout(a: Json, zone: LocalZone): WorkoutRecord {
  return activityLogWorkout(a, {
    provenance: { provider: PROVIDER, source: PROVIDER },
    readStart: (startTime) => readInstant(startTime, 'startTime'),
    trackerLogTypes: [],
    // The profile's zone name when the log was made in it (its offset then is the log's), else the log's offset.
    timeMetadata: (start) => ({ timezone: zone.name && zonedOffset(start.ms, zone) === start.offset ? zone.name : start.offset, utc_offset: start.offset }),
    extraMetadata: () => ({}),
  });
}

/**
 * How one Fitbit source reads an activity log where it differs from the others: how `startTime`
 * is written, which log types count as the tracker's though they name no source, and the metadata
 * about time (first) and anything else (last) it adds.
 */
export type ActivityLogReading<S extends { ms: number }> = {
  provenance: { provider: string; source: string };
  readStart: (startTime: unknown) => S;
  trackerLogTypes: readonly string[];
  timeMetadata: (start: S) => Metadata;
  extraMetadata: (log: Json) => Metadata;
};

/**
 * One activity log as a workout. The Web API's activity log list and the Takeout export's
 * exercise files hold the same objects, so both read them here: `duration` and `activeDuration`
 * are milliseconds, `distance` is in `distanceUnit`, `source.type` "tracker" names the device.
 */
export function activityLogWorkout<S extends { ms: number }>(a: Json, r: ActivityLogReading<S>): WorkoutRecord {
  const id = a.logId;
  if (typeof id !== 'number' && typeof id !== 'string') throw new RecordError('logId is missing');
  const start = r.readStart(a.startTime);
  const durationMs = requireNum(a.duration, 'duration');
  if (durationMs <= 0) throw new RecordError('duration is not positive');
  const active = num(a.activeDuration, 'activeDuration');
  const distance = num(a.distance, 'distance');
  const unit = typeof a.distanceUnit === 'string' ? a.distanceUnit.toLowerCase() : 'kilometer';
  const factor = DISTANCE_METRES[unit];
  if (distance !== null && (factor === undefined || Number.isNaN(factor))) throw new RecordError(`distanceUnit ${JSON.stringify(a.distanceUnit)} is not a length`);
  const source = isObject(a.source) ? a.source : null;
  const tracker = source?.type === 'tracker' || (typeof a.logType === 'string' && r.trackerLogTypes.includes(a.logType));
  return {
    kind: 'workout',
    ...r.provenance,
    device: tracker && typeof source?.name === 'string' ? source.name : null,
    body_worn: tracker,
    external_id: `activity:${id}`,
    type: fitbitActivityType(a.activityName),
    start_date: iso(start.ms),
    end_date: iso(start.ms + durationMs),
    duration_s: Math.round((active ?? durationMs) / 1000),
    active_energy_kcal: num(a.calories, 'calories'),
    distance_m: distance === null ? null : Math.round(distance * factor! * 10) / 10,
    avg_heart_rate: num(a.averageHeartRate, 'averageHeartRate'),
    max_heart_rate: null,
    steps: num(a.steps, 'steps'),
    route: [],
    metadata: {
      ...r.timeMetadata(start),
      activity_name: a.activityName ?? null,
      activity_type_id: a.activityTypeId ?? null,
      log_type: a.logType ?? null,
      manual: a.logType === 'manual',
      elevation_gain_m: num(a.elevationGain, 'elevationGain'),
      has_gps: a.hasGps === true,
      source: source ? { type: source.type ?? null, name: source.name ?? null } : null,
      ...r.extraMetadata(a),
    },
  };
}
