import type { RoutePointLine } from './gpxRoute.js';
import { contentId } from './exportIds.js';
import { type Obj, dateText, fail, instantOf, knownAttributes, numberOf, provenanceFields } from './exportFields.js';
import type { XmlElement } from './exportXmlReader.js';

/**
 * `Workout` elements → device-a's workout line (docs/formats/device-a.md "workout"). Both shapes
 * iOS has written: the old attributes (`duration`, `totalDistance`, `totalEnergyBurned` with their
 * units) and, from iOS 16, `WorkoutStatistics` children (sums and averages per quantity type),
 * `WorkoutActivity` parts and `WorkoutEvent`s. The route is either inline (`WorkoutRoute` with
 * `Location`s, before iOS 11) or in GPX files the route names by `FileReference`; the caller reads
 * those and passes the points.
 */

const WORKOUT_OWN = knownAttributes([
  'workoutActivityType',
  'duration',
  'durationUnit',
  'totalDistance',
  'totalDistanceUnit',
  'totalEnergyBurned',
  'totalEnergyBurnedUnit',
  'totalSwimmingStrokeCount',
  'totalSwimmingStrokeCountUnit',
  'totalFlightsClimbed',
  'totalFlightsClimbedUnit',
]);

/** Seconds per duration unit HealthKit writes for events and activities. */
const SECONDS: Readonly<Record<string, number>> = { s: 1, sec: 1, min: 60, hr: 3600, h: 3600, ms: 0.001 };

function quantity(value: string | undefined, unit: string | undefined): { value: number; unit: string } | null {
  if (value === undefined || value === '') return null;
  const v = numberOf(value);
  if (!Number.isFinite(v)) fail(`${value} is not a number`);
  return unit ? { value: v, unit } : { value: v, unit: '' };
}

function durationSeconds(a: Record<string, string>): number | null {
  const v = numberOf(a.duration);
  const f = SECONDS[a.durationUnit ?? 'min'];
  return Number.isFinite(v) && f !== undefined ? v * f : null;
}

function isoOf(date: string | undefined): string | null {
  const ms = instantOf(date);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

const EVENT_PREFIX = 'HKWorkoutEventType';

function eventOf(e: XmlElement): Obj {
  const type = e.attrs.type ?? '';
  const out: Obj = { type: type.startsWith(EVENT_PREFIX) ? type.slice(EVENT_PREFIX.length).toLowerCase() : type, date: isoOf(e.attrs.date) };
  const d = durationSeconds(e.attrs);
  if (d !== null && d > 0) out.duration_s = d;
  return out;
}

/** WorkoutStatistics children → device-a's `statistics`: identifier → {average, minimum, maximum, sum, unit}. */
function statisticsOf(children: XmlElement[]): Obj {
  const stats: Obj = {};
  for (const c of children) {
    if (c.name !== 'WorkoutStatistics' || !c.attrs.type) continue;
    const s: Obj = { unit: c.attrs.unit ?? '' };
    for (const k of ['average', 'minimum', 'maximum', 'sum'] as const) if (c.attrs[k] !== undefined) s[k] = numberOf(c.attrs[k]);
    stats[c.attrs.type] = s;
  }
  return stats;
}

/** Paths of the GPX files the workout's routes name (`FileReference path="/workout-routes/…"`), in order. */
export function routeFilesOf(el: XmlElement): string[] {
  const out: string[] = [];
  for (const r of el.children) {
    if (r.name !== 'WorkoutRoute') continue;
    for (const f of r.children) if (f.name === 'FileReference' && f.attrs.path) out.push(f.attrs.path);
  }
  return out;
}

/** Inline `Location`s of old exports in device-a's route point shape. */
export function inlineRouteOf(el: XmlElement): RoutePointLine[] {
  const out: RoutePointLine[] = [];
  for (const r of el.children) {
    if (r.name !== 'WorkoutRoute') continue;
    for (const l of r.children) {
      if (l.name !== 'Location') continue;
      const a = l.attrs;
      out.push({
        timestamp: dateText(a.date) ?? '',
        latitude: numberOf(a.latitude),
        longitude: numberOf(a.longitude),
        altitude: numberOf(a.altitude),
        speed: numberOf(a.speed),
        course: numberOf(a.course),
        horizontal_accuracy: numberOf(a.horizontalAccuracy),
        vertical_accuracy: numberOf(a.verticalAccuracy),
      });
    }
  }
  return out;
}

export type RouteNotes = { missing: string[]; damaged: string[]; truncated: boolean };

export function workoutObject(el: XmlElement, route: RoutePointLine[], notes: RouteNotes): Obj {
  const a = el.attrs;
  const o = provenanceFields(el, WORKOUT_OWN);
  const metadata = o.metadata as Obj;
  const events = el.children.filter((c) => c.name === 'WorkoutEvent').map(eventOf);
  if (events.length) metadata.events = events;
  const parts = el.children.filter((c) => c.name === 'WorkoutActivity');
  if (parts.length) {
    metadata.activities = parts.map((p) => {
      const part: Obj = { start_date: isoOf(p.attrs.startDate), end_date: isoOf(p.attrs.endDate), duration_s: durationSeconds(p.attrs) };
      if (p.attrs.workoutActivityType) part.activity_type = p.attrs.workoutActivityType;
      if (p.attrs.uuid) part.uuid = p.attrs.uuid;
      return part;
    });
  }
  const files = new Set(routeFilesOf(el));
  if (files.size) metadata.route_files = files.size;
  if (notes.missing.length) metadata.route_files_missing = notes.missing;
  if (notes.damaged.length) metadata.route_files_damaged = notes.damaged;
  if (notes.truncated) metadata.route_truncated = true;
  for (const k of ['totalSwimmingStrokeCount', 'totalFlightsClimbed'] as const) {
    if (a[k] !== undefined) metadata[k] = numberOf(a[k]);
  }
  o.kind = 'workout';
  o.activity_type = a.workoutActivityType;
  o.uuid = contentId('ahw', [a.workoutActivityType, o.start_date as string, o.end_date as string, a.sourceName ?? a.source]);
  const d = quantity(a.duration, a.durationUnit ?? 'min');
  if (d) o.duration = d;
  const dist = quantity(a.totalDistance, a.totalDistanceUnit);
  if (dist) o.total_distance = dist;
  const energy = quantity(a.totalEnergyBurned, a.totalEnergyBurnedUnit);
  if (energy) o.total_energy_burned = energy;
  o.statistics = statisticsOf(el.children);
  o.route = route;
  return o;
}
