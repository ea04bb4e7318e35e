import type { ParseItem, RoutePoint, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { epochSeconds, isObject, iso, optionalNumber, optionalString, requiredNumber, summaryMetadata, SummaryError, zoneMetadata, zoneOffset, type Summary } from './fields.js';
import { rejected, record, type DecodeContext } from './decodeContext.js';
import { provenance } from './garminRecords.js';
import { SampleSummary } from '../../derivations/workoutSummaries.js';
import { workoutType } from './vocabulary.js';

/**
 * An activity's workout is keyed by Garmin's activity id (the summaryId of an `activityDetails`
 * item is the activity's with "-detail" added): the summary and its details name one workout,
 * and whichever comes later completes it (the details add the route and the heart-rate extremes).
 */
function workoutId(s: Summary, fallback: string | null): string {
  const activityId = s.activityId;
  if (typeof activityId === 'number' || (typeof activityId === 'string' && activityId !== '')) return `activities:${activityId}`;
  if (fallback === null) throw new SummaryError('summaryId and activityId are missing');
  return `activities:${fallback.replace(/-detail$/, '')}`;
}

function workout(summary: Summary, ctx: DecodeContext, id: string, route: RoutePoint[], extraMeta: Record<string, unknown>, hr: number[]): WorkoutRecord {
  const start = epochSeconds(summary, 'startTimeInSeconds');
  const duration = requiredNumber(summary, 'durationInSeconds');
  if (duration < 0 || duration > 7 * 86_400) throw new SummaryError(`durationInSeconds ${duration} is not a workout's length`);
  const activityType = optionalString(summary, 'activityType');
  const manual = summary.manual === true;
  const device = optionalString(summary, 'deviceName');
  const steps = optionalNumber(summary, 'steps');
  const samples = SampleSummary.of(hr);
  const avgHr = optionalNumber(summary, 'averageHeartRateInBeatsPerMinute') ?? (samples.mean === null ? null : Math.round(samples.mean));
  const maxHr = optionalNumber(summary, 'maxHeartRateInBeatsPerMinute') ?? samples.max;
  return {
    kind: 'workout',
    ...provenance(ctx.provider, !manual, device),
    external_id: id,
    type: workoutType(activityType),
    start_date: iso(start),
    end_date: iso(start + duration),
    duration_s: duration,
    active_energy_kcal: optionalNumber(summary, 'activeKilocalories'),
    distance_m: optionalNumber(summary, 'distanceInMeters'),
    avg_heart_rate: avgHr,
    max_heart_rate: maxHr,
    steps,
    route,
    metadata: { ...summaryMetadata(summary), ...extraMeta, ...zoneMetadata(zoneOffset(summary)), ...(manual ? { was_user_entered: true } : {}) },
  };
}

/** `activities`: one summary per recorded (or manually entered) activity → a workout. */
export function decodeActivity(s: Summary, ctx: DecodeContext): ParseItem[] {
  return [record(workout(s, ctx, workoutId(s, optionalString(s, 'summaryId')), [], {}, []))];
}

/**
 * `activityDetails`: the activity's summary plus its samples (one every second or so: position,
 * elevation, speed, heart rate…). → the same workout with its route; samples without a position
 * add no route point; an implausible position is rejected alone.
 */
export function decodeActivityDetails(s: Summary, ctx: DecodeContext): ParseItem[] {
  const summary = s.summary;
  if (!isObject(summary)) throw new SummaryError('summary is missing');
  const samples = s.samples ?? [];
  if (!Array.isArray(samples)) throw new SummaryError('samples is not a list');
  const out: ParseItem[] = [];
  const route: (RoutePoint & { t: number })[] = [];
  const hr: number[] = [];
  samples.forEach((sample: unknown, i: number) => {
    if (!isObject(sample)) {
      out.push(rejected(ctx.location, `samples[${i}] is not an object`, sample));
      return;
    }
    try {
      const h = optionalNumber(sample, 'heartRate');
      if (h !== null && h >= 25 && h <= 250) hr.push(h);
      const lat = optionalNumber(sample, 'latitudeInDegree');
      const lon = optionalNumber(sample, 'longitudeInDegree');
      if (lat === null || lon === null) return;
      if (lat < -90 || lat > 90 || lon < -180 || lon > 180) throw new SummaryError(`position ${lat},${lon} is not on Earth`);
      const t = epochSeconds(sample, 'startTimeInSeconds');
      route.push({
        timestamp: iso(t),
        latitude: lat,
        longitude: lon,
        altitude_m: optionalNumber(sample, 'elevationInMeters'),
        speed_mps: optionalNumber(sample, 'speedMetersPerSecond'),
        course_deg: null,
        horizontal_accuracy_m: null,
        t,
      });
    } catch (err) {
      if (!(err instanceof SummaryError)) throw err;
      out.push(rejected(ctx.location, `samples[${i}]: ${err.message}`, sample));
    }
  });
  route.sort((a, b) => a.t - b.t);
  const id = workoutId({ ...summary, activityId: s.activityId ?? summary.activityId }, optionalString(s, 'summaryId'));
  const laps = Array.isArray(s.laps) ? s.laps.length : 0;
  out.unshift(record(workout(summary, ctx, id, route.map(({ t: _t, ...pt }) => pt), { details_summaryId: s.summaryId, samples: samples.length, laps }, hr)));
  return out;
}
