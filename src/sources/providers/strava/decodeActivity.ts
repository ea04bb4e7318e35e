import type { Metadata, ParseItem, QuantityRecord, RoutePoint, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { canonicalTimeZone } from '../../../shared/timeZones.js';
import { excerptOf, isObject, optionalNumber, quantity, RecordError, type Json } from '../../shared/connectorRecords.js';
import { iso, normalOffset, readInstant } from '../../shared/providerTimes.js';
import { SampleSummary } from '../../derivations/workoutSummaries.js';
import { workoutType } from './sportTypes.js';

const PROVIDER = 'strava';

/**
 * An activity as Strava lists it (`/api/v3/athlete/activities`, SummaryActivity): `start_date` is
 * UTC; `start_date_local` is the wall time written with a misleading `Z`, so the zone comes from
 * `timezone` ("(GMT+01:00) Europe/Paris") and `utc_offset` (seconds, at the start). Durations are
 * seconds, distances metres. Manual entries have no streams; every other activity is stored once
 * more with its streams (payload `streams`), which is the one that makes its workout record.
 */
export function hasStreams(activity: Json): boolean {
  return activity.manual !== true;
}

function zoneOf(a: Json): { name: string | null; offset: string | null } {
  const tz = typeof a.timezone === 'string' ? a.timezone : '';
  const name = canonicalTimeZone(tz.replace(/^\([^)]*\)\s*/, '').trim());
  const seconds = optionalNumber(a.utc_offset, 'utc_offset');
  if (seconds === null || Math.abs(seconds) > 18 * 3600) return { name, offset: null };
  const m = Math.round(Math.abs(seconds) / 60);
  return { name, offset: normalOffset(`${seconds < 0 ? '-' : '+'}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`) };
}

function idOf(a: Json): string {
  const id = a.id;
  if ((typeof id !== 'number' || !Number.isInteger(id)) && (typeof id !== 'string' || !/^\d+$/.test(id))) throw new RecordError('id is missing');
  // Past 2^53 a JSON number no longer names one activity: two could share an external id.
  if (typeof id === 'number' && !Number.isSafeInteger(id)) throw new RecordError(`id ${id} is too large to read exactly`);
  return String(id);
}

type Streams = { time: number[]; latlng: ([number, number] | null)[]; altitude: (number | null)[]; speed: (number | null)[]; heartrate: (number | null)[] };

/** Streams keyed by type (`key_by_type=true`) or as Strava's default list of `{type, data}`. */
export function readStreams(v: unknown): Streams | null {
  if (v === null || v === undefined) return null;
  const byType: Record<string, unknown[]> = {};
  if (Array.isArray(v)) {
    for (const s of v) if (isObject(s) && typeof s.type === 'string' && Array.isArray(s.data)) byType[s.type] = s.data;
  } else if (isObject(v)) {
    for (const [k, s] of Object.entries(v)) if (isObject(s) && Array.isArray(s.data)) byType[k] = s.data;
  } else throw new RecordError('streams are neither a list nor keyed by type');
  const time = byType.time;
  if (!time) return null;
  const numAt = (list: unknown[] | undefined, i: number) => {
    const x = list?.[i];
    return typeof x === 'number' && Number.isFinite(x) ? x : null;
  };
  const times: number[] = [];
  for (const t of time) {
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0) throw new RecordError('the time stream holds a value that is not seconds from the start');
    times.push(t);
  }
  return {
    time: times,
    latlng: times.map((_, i) => {
      const p = byType.latlng?.[i];
      return Array.isArray(p) && typeof p[0] === 'number' && typeof p[1] === 'number' && Math.abs(p[0]) <= 90 && Math.abs(p[1]) <= 180 ? [p[0], p[1]] : null;
    }),
    altitude: times.map((_, i) => numAt(byType.altitude, i)),
    speed: times.map((_, i) => numAt(byType.velocity_smooth, i)),
    heartrate: times.map((_, i) => numAt(byType.heartrate, i)),
  };
}

/** The workout of an activity, with its route and heart rate from the streams when there are any. */
export function decodeWorkout(a: Json, streams: Streams | null): ParseItem[] {
  const id = idOf(a);
  const start = readInstant(a.start_date, 'start_date');
  const elapsed = optionalNumber(a.elapsed_time, 'elapsed_time');
  if (elapsed === null || elapsed < 0) throw new RecordError('elapsed_time is missing');
  const moving = optionalNumber(a.moving_time, 'moving_time');
  const zone = zoneOf(a);
  const manual = a.manual === true;
  const heart = streams ? streams.heartrate.filter((h): h is number => h !== null && h > 0) : [];
  const hr = SampleSummary.of(heart);
  const avgHr = optionalNumber(a.average_heartrate, 'average_heartrate') ?? hr.mean1;
  const maxHr = optionalNumber(a.max_heartrate, 'max_heartrate') ?? hr.max;
  const calories = optionalNumber(a.calories, 'calories');
  const kilojoules = optionalNumber(a.kilojoules, 'kilojoules');
  // Strava's kilojoules are the rider's mechanical work; at the body's ~24 % efficiency the energy
  // burned in kcal is the same number, which is how Strava itself estimates ride calories.
  const energy = calories !== null && calories > 0 ? calories : kilojoules;
  const device = typeof a.device_name === 'string' && a.device_name.trim() ? a.device_name.trim() : null;
  const metadata: Metadata = {
    timezone: zone.name ?? zone.offset,
    utc_offset: zone.offset,
    name: typeof a.name === 'string' ? a.name : null,
    sport_type: a.sport_type ?? a.type ?? null,
    start_date_local: a.start_date_local ?? null,
    elapsed_time_s: elapsed,
    moving_time_s: moving,
    total_elevation_gain_m: optionalNumber(a.total_elevation_gain, 'total_elevation_gain'),
    average_speed_mps: optionalNumber(a.average_speed, 'average_speed'),
    max_speed_mps: optionalNumber(a.max_speed, 'max_speed'),
    average_watts: optionalNumber(a.average_watts, 'average_watts'),
    kilojoules,
    calories,
    trainer: a.trainer === true,
    commute: a.commute === true,
    manual,
  };
  const route: RoutePoint[] = [];
  const samples: QuantityRecord[] = [];
  if (streams) {
    const worn = { provider: PROVIDER, source: PROVIDER, device, body_worn: true };
    for (let i = 0; i < streams.time.length; i++) {
      const t = start.ms + streams.time[i]! * 1000;
      const p = streams.latlng[i];
      if (p) route.push({ timestamp: iso(t), latitude: p[0], longitude: p[1], altitude_m: streams.altitude[i]!, speed_mps: streams.speed[i]!, course_deg: null, horizontal_accuracy_m: null });
      const hr = streams.heartrate[i];
      if (hr !== null && hr !== undefined && hr >= 20 && hr <= 250) {
        samples.push(quantity(worn, { external_id: `${id}:heart_rate:${streams.time[i]}`, type: 'heart_rate', value: hr, unit: 'count/min', start: t, end: t, metadata: { timezone: metadata.timezone, utc_offset: zone.offset, activity_id: id } }));
      }
    }
  }
  const workout: WorkoutRecord = {
    kind: 'workout',
    provider: PROVIDER,
    source: PROVIDER,
    device,
    // A heart rate needs a sensor on the body; a phone's GPS alone, or a typed-in entry, is not worn.
    body_worn: !manual && (a.has_heartrate === true || heart.length > 0),
    external_id: id,
    type: workoutType(a.sport_type, a.type),
    start_date: iso(start.ms),
    end_date: iso(start.ms + elapsed * 1000),
    duration_s: Math.round(moving ?? elapsed),
    active_energy_kcal: energy,
    distance_m: optionalNumber(a.distance, 'distance'),
    avg_heart_rate: avgHr,
    max_heart_rate: maxHr,
    steps: null,
    route,
    metadata,
  };
  return [{ record: workout }, ...samples.map((record) => ({ record }))];
}

/** A page of the activity list: workouts for the activities that have no streams (the others come with theirs). */
export function decodeActivityPage(body: unknown): ParseItem[] {
  if (!Array.isArray(body)) throw new RecordError('the answer is not a list of activities');
  return body.flatMap((a, i) => {
    try {
      if (!isObject(a)) throw new RecordError('not an object');
      return hasStreams(a) ? [] : decodeWorkout(a, null);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      return [{ rejected: { location: `record ${i + 1}`, reason: `activity: ${err.message}`, excerpt: excerptOf(a) } }];
    }
  });
}
