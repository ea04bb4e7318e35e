import type { Metadata, RoutePoint, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { isObject, type Json } from '../../shared/recordError.js';
import { parseHealthKitDate } from './healthKitDates.js';
import { fail, finite, metadataOf, timesOf, uuidOf } from './lineFields.js';
import { catalogValue, quantityField, statValue, ucumValue } from './unitMapping.js';
import { provenanceOf, type Upload } from './upload.js';
import { activityOf, DISTANCE_STATISTICS } from './vocabulary.js';

/** HKWorkout lines, with their route (CLLocation points) and statistics. */

function optionalNumber(v: unknown, invalidBelowZero: boolean): number | null {
  if (!finite(v)) return null;
  // CLLocation marks an unknown speed, course or accuracy with a negative value.
  return invalidBelowZero && v < 0 ? null : v;
}

function routeOf(o: Json, md: Metadata): RoutePoint[] {
  const raw = o.route;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) fail('route is not an array');
  const route: RoutePoint[] = [];
  let dropped = 0;
  for (const pt of raw as unknown[]) {
    if (!isObject(pt)) {
      dropped++;
      continue;
    }
    const ts = parseHealthKitDate(pt.timestamp);
    const lat = pt.latitude;
    const lon = pt.longitude;
    if (Number.isNaN(ts) || !finite(lat) || !finite(lon) || lat < -90 || lat > 90 || lon < -180 || lon > 180) {
      dropped++;
      continue;
    }
    const verticalOk = !(finite(pt.vertical_accuracy) && pt.vertical_accuracy < 0);
    route.push({
      timestamp: new Date(ts).toISOString(),
      latitude: lat,
      longitude: lon,
      altitude_m: verticalOk ? optionalNumber(pt.altitude, false) : null,
      speed_mps: optionalNumber(pt.speed, true),
      course_deg: optionalNumber(pt.course, true),
      horizontal_accuracy_m: optionalNumber(pt.horizontal_accuracy, true),
    });
  }
  if (dropped) md.route_points_dropped = dropped;
  return route;
}

export function workoutLine(up: Upload, o: Json): WorkoutRecord {
  const uuid = uuidOf(o);
  const t = timesOf(o);
  const p = up.prov(o);
  const md = metadataOf(o);
  const activity = activityOf(o.activity_type);
  md.original_activity_type = o.activity_type ?? null;

  let duration = (t.end - t.start) / 1000;
  const d = quantityField(o, 'duration', 's');
  if (d) duration = d.unit === 's' ? d.value : ucumValue(d.value, d.unit, 's', 'duration');
  if (duration < 0) fail('duration is negative');

  let energy = catalogValue(up, o, 'total_energy_burned', 'active_energy_burned', null);
  energy ??= statValue(up, o, 'HKQuantityTypeIdentifierActiveEnergyBurned', 'sum', 'active_energy_burned');
  let distance = catalogValue(up, o, 'total_distance', 'walking_running_distance', null);
  for (let i = 0; distance === null && i < DISTANCE_STATISTICS.length; i++) {
    distance = statValue(up, o, DISTANCE_STATISTICS[i]!, 'sum', 'walking_running_distance');
  }
  const route = routeOf(o, md);
  return {
    kind: 'workout',
    external_id: uuid,
    type: activity,
    start_date: t.start_date,
    end_date: t.end_date,
    duration_s: duration,
    active_energy_kcal: energy,
    distance_m: distance,
    avg_heart_rate: statValue(up, o, 'HKQuantityTypeIdentifierHeartRate', 'average', 'heart_rate'),
    max_heart_rate: statValue(up, o, 'HKQuantityTypeIdentifierHeartRate', 'maximum', 'heart_rate'),
    steps: statValue(up, o, 'HKQuantityTypeIdentifierStepCount', 'sum', 'step_count'),
    route,
    metadata: md,
    ...provenanceOf(p),
  };
}
