import { getFitGarminProductDisplayName } from 'fit-file-parser';
import type { Metadata, ParseItem, Provenance, QuantityRecord, RoutePoint, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { catalogQuantity, type SampleFields } from '../exportShared/catalogRecords.js';
import { FIT_LIMITS } from '../exportShared/parserLimits.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import { fitMessages, type FitMessage } from './fitMessages.js';
import { MonitoringReadings } from './fitMonitoring.js';
import { workoutTypeOf } from './sports.js';

/**
 * One FIT file's messages → records (contracts §20; field by field in docs/formats/fit.md).
 * Heart-rate samples go out as their `record` messages come; sessions, whose route points come
 * before them, go out at the end of the file, with what the file's `activity` message says.
 */

/** FIT manufacturers (the profile's names) that are another name of a vendor of docs/sources.md. */
const VENDORS: ReadonlyMap<string, string> = new Map([
  ['garmin', 'garmin'],
  ['dynastream', 'garmin'],
  ['dynastream_oem', 'garmin'],
  ['wahoo_fitness', 'wahoo'],
  ['coros', 'coros'],
  ['suunto', 'suunto'],
  ['polar_electro', 'polar'],
  ['strava', 'strava'],
  ['zwift', 'zwift'],
]);
const GARMIN_PRODUCTS = new Set(['garmin', 'dynastream', 'dynastream_oem']);

type Device = { source: string; name: string | null };

const isDate = (v: unknown): v is Date => v instanceof Date && Number.isFinite(v.getTime());
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const title = (s: string) => s.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');

/** The device of a `file_id`: manufacturer and product as the profile names them; the serial number is not read. */
function deviceOf(fileId: Record<string, unknown>, provider: string): Device {
  const manufacturer = typeof fileId.manufacturer === 'string' ? fileId.manufacturer : null;
  const product = fileId.garmin_product ?? fileId.product;
  let productName: string | null = typeof fileId.product_name === 'string' && fileId.product_name.trim() ? fileId.product_name.trim() : null;
  if (!productName && manufacturer && GARMIN_PRODUCTS.has(manufacturer) && (typeof product === 'number' || typeof product === 'string')) {
    productName = getFitGarminProductDisplayName(product);
  }
  if (!productName && (typeof product === 'number' || typeof product === 'string')) productName = `product ${String(product)}`;
  const maker = manufacturer ? title(manufacturer) : null;
  const name = productName && maker && !productName.toLowerCase().startsWith(maker.split(' ')[0]!.toLowerCase()) ? `${maker} ${productName}` : (productName ?? maker);
  return { source: (manufacturer && VENDORS.get(manufacturer)) ?? manufacturer ?? provider, name };
}

/** Minutes of local minus UTC from a message's `local_timestamp` (a local time written as if UTC) and `timestamp`. */
function localOffsetMinutes(f: Record<string, unknown> | null): number | null {
  if (!f || !isDate(f.timestamp) || !isDate(f.local_timestamp)) return null;
  const minutes = Math.round((f.local_timestamp.getTime() - f.timestamp.getTime()) / 60_000);
  return Math.abs(minutes) > 14 * 60 ? null : minutes;
}

/** `±HH:MM` of an offset in minutes. */
function zoneOf(minutes: number | null): string | null {
  if (minutes === null) return null;
  const a = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/** Session fields kept in the workout's metadata where the workout record has no field of its own (FIT name → metadata key). */
const SESSION_METADATA: readonly (readonly [string, string])[] = [
  ['total_elapsed_time', 'elapsed_time_s'],
  ['total_timer_time', 'timer_time_s'],
  ['avg_cadence', 'avg_cadence'],
  ['max_cadence', 'max_cadence'],
  ['avg_running_cadence', 'avg_running_cadence'],
  ['total_cycles', 'total_cycles'],
  ['total_strides', 'total_strides'],
  ['avg_power', 'avg_power_w'],
  ['max_power', 'max_power_w'],
  ['normalized_power', 'normalized_power_w'],
  ['total_work', 'total_work_j'],
  ['total_ascent', 'total_ascent_m'],
  ['total_descent', 'total_descent_m'],
  ['avg_speed', 'avg_speed_mps'],
  ['max_speed', 'max_speed_mps'],
  ['enhanced_avg_speed', 'avg_speed_mps'],
  ['enhanced_max_speed', 'max_speed_mps'],
  ['avg_temperature', 'avg_temperature_c'],
  ['pool_length', 'pool_length_m'],
  ['num_active_lengths', 'active_lengths'],
];

/** Weight-scale fields without a catalog type, kept in the body_mass record's metadata. */
const WEIGHT_METADATA: readonly (readonly [string, string])[] = [
  ['percent_hydration', 'hydration_percent'],
  ['bone_mass', 'bone_mass_kg'],
  ['muscle_mass', 'muscle_mass_kg'],
  ['visceral_fat_mass', 'visceral_fat_mass_kg'],
  ['visceral_fat_rating', 'visceral_fat_rating'],
  ['basal_met', 'basal_metabolic_rate_kcal_per_day'],
  ['active_met', 'active_metabolic_rate_kcal_per_day'],
  ['metabolic_age', 'metabolic_age_years'],
  ['physique_rating', 'physique_rating'],
  ['bmi', 'bmi'],
];

function picked(fields: Record<string, unknown>, names: readonly (readonly [string, string])[]): Metadata {
  const out: Metadata = {};
  for (const [from, to] of names) {
    const v = num(fields[from]);
    if (v !== null) out[to] = v;
  }
  return out;
}

/** Each monitoring amount's kind in its external id (`<file key>:<kind>:<n>`, as the first import named them) and unit. */
const MONITORING_KINDS = { heart_rate: 'monitoring_hr', step_count: 'monitoring_steps', active_energy_burned: 'monitoring_kcal' } as const;
const MONITORING_UNITS = { heart_rate: '/min', step_count: '{steps}', active_energy_burned: 'kcal' } as const;

type Session = { fields: Record<string, unknown>; offset: number; device: Device; fileKey: string };

/**
 * The records of one .fit file (its bytes whole); `where` names it in rejections ("the file", or
 * its path in the zip), followed by the byte offset.
 */
export function* fitFileItems(bytes: Uint8Array, where: string, provider: string): Generator<ParseItem> {
  let device: Device = { source: provider, name: null };
  let fileKey = 'fit';
  let sessions: Session[] = [];
  let route: RoutePoint[] = [];
  let routeDropped = 0;
  let activity: Record<string, unknown> | null = null;
  const index = new Map<string, number>();
  let monitoring = new MonitoringReadings();
  let monitoringZone: string | null = null;
  const at = (offset: number) => `${where} byte ${offset}`;

  const sample = (): SampleFields => ({ source_name: device.name, source_bundle_id: null, device_model: device.name, product_type: null, was_user_entered: false });
  const provenance = (bodyWorn: boolean): Provenance => ({ provider, source: device.source, device: device.name, body_worn: bodyWorn });
  const nth = (kind: string) => {
    const n = index.get(kind) ?? 0;
    index.set(kind, n + 1);
    return n;
  };
  const quantity = (m: FitMessage, kind: string, type: string, value: number, ucum: string, start: Date, end: Date, bodyWorn: boolean, metadata: Metadata = {}): ParseItem => {
    try {
      const record: QuantityRecord = catalogQuantity(provenance(bodyWorn), sample(), {
        external_id: `${fileKey}:${kind}:${nth(kind)}`,
        type,
        stored: { value, ucum },
        start: start.getTime(),
        end: end.getTime(),
        metadata: { fit_message: m.name, ...metadata },
      });
      return { record };
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      return rejectedItem(at(m.offset), `${m.name}: ${err.message}`, m.fields);
    }
  };
  const endOfFile = function* (): Generator<ParseItem> {
    const zone = zoneOf(localOffsetMinutes(activity));
    const legs = sessions.length;
    for (let i = 0; i < legs; i++) yield workoutOf(sessions[i]!, i, legs, zone);
    const unread = monitoring.unreadReason();
    if (unread) yield rejectedItem(where, unread, '');
    sessions = [];
    route = [];
    routeDropped = 0;
    activity = null;
    monitoring = new MonitoringReadings();
    monitoringZone = null;
  };
  const workoutOf = (s: Session, leg: number, legs: number, zone: string | null): ParseItem => {
    const f = s.fields;
    const start = f.start_time;
    const elapsed = num(f.total_elapsed_time);
    if (!isDate(start) || elapsed === null || elapsed < 0) return rejectedItem(at(s.offset), 'session: no start_time or total_elapsed_time', f);
    const end = new Date(start.getTime() + elapsed * 1000);
    const from = start.toISOString();
    const to = end.toISOString();
    const points = route.filter((p) => p.timestamp >= from && p.timestamp <= to);
    const metadata: Metadata = { fit_sport: f.sport ?? null, fit_sub_sport: f.sub_sport ?? null, ...picked(f, SESSION_METADATA) };
    if (legs > 1) metadata.multisport = { leg: leg + 1, legs };
    if (zone) metadata.timezone = zone;
    if (routeDropped > 0) metadata.route_points_dropped = routeDropped;
    const record: WorkoutRecord = {
      kind: 'workout',
      provider,
      source: s.device.source,
      device: s.device.name,
      body_worn: num(f.avg_heart_rate) !== null,
      external_id: `${s.fileKey}:session:${leg}`,
      type: workoutTypeOf(f.sport, f.sub_sport),
      start_date: start.toISOString(),
      end_date: end.toISOString(),
      duration_s: num(f.total_timer_time) ?? elapsed,
      active_energy_kcal: num(f.total_calories),
      distance_m: num(f.total_distance),
      avg_heart_rate: num(f.avg_heart_rate),
      max_heart_rate: num(f.max_heart_rate),
      steps: null,
      route: points,
      metadata,
    };
    return { record };
  };

  for (const item of fitMessages(bytes)) {
    if ('fileStart' in item) {
      // A chained file: what the one before it held is complete (its records keep counting, so ids stay unique in the upload's file).
      yield* endOfFile();
      continue;
    }
    if ('damage' in item) {
      yield* endOfFile();
      yield rejectedItem(at(item.damage.offset), item.damage.reason, '');
      return;
    }
    const m = item.message;
    const f = m.fields;
    if (m.name !== 'monitoring') monitoring.noteTime(f.timestamp);
    switch (m.name) {
      case 'file_id':
        device = deviceOf(f, provider);
        fileKey = `fit:${String(f.manufacturer ?? '')}:${String(f.product ?? '')}:${isDate(f.time_created) ? f.time_created.toISOString() : `at${m.offset}`}`;
        break;
      case 'record': {
        const t = f.timestamp;
        const hr = num(f.heart_rate);
        if (!isDate(t)) {
          if (hr !== null) yield rejectedItem(at(m.offset), 'record: a heart rate without a timestamp', f);
          break;
        }
        if (hr !== null) yield quantity(m, 'hr', 'heart_rate', hr, '/min', t, t, true);
        const lat = num(f.position_lat);
        const lon = num(f.position_long);
        if (lat !== null && lon !== null && Math.abs(lat) <= 90 && Math.abs(lon) <= 180) {
          if (route.length >= FIT_LIMITS.maxRoutePoints) routeDropped++;
          else
            route.push({
              timestamp: t.toISOString(),
              latitude: lat,
              longitude: lon,
              altitude_m: num(f.enhanced_altitude) ?? num(f.altitude),
              speed_mps: num(f.enhanced_speed) ?? num(f.speed),
              course_deg: null,
              horizontal_accuracy_m: null,
            });
        }
        break;
      }
      case 'session':
        sessions.push({ fields: f, offset: m.offset, device, fileKey });
        break;
      case 'activity':
        activity = f;
        break;
      case 'monitoring_info': {
        const minutes = localOffsetMinutes(f);
        if (minutes !== null) monitoring.noteLocalOffset(minutes);
        monitoringZone = zoneOf(minutes);
        break;
      }
      case 'monitoring':
        for (const r of monitoring.read(f)) {
          const metadata = monitoringZone ? { ...r.metadata, timezone: monitoringZone } : r.metadata;
          yield quantity(m, MONITORING_KINDS[r.type], r.type, r.value, MONITORING_UNITS[r.type], r.start, r.end, true, metadata);
        }
        break;
      case 'weight_scale':
        yield* weightItems(m);
        break;
    }
  }
  yield* endOfFile();

  function* weightItems(m: FitMessage): Generator<ParseItem> {
    const f = m.fields;
    const t = f.timestamp;
    if (!isDate(t)) {
      yield rejectedItem(at(m.offset), 'weight_scale: no timestamp', f);
      return;
    }
    const user = f.user_profile_index as { value?: unknown } | undefined;
    const who: Metadata = typeof user?.value === 'number' ? { fit_user_profile_index: user.value } : {};
    const weight = num(f.weight);
    if (weight !== null) yield quantity(m, 'weight', 'body_mass', weight, 'kg', t, t, false, { ...who, ...picked(f, WEIGHT_METADATA) });
    const fat = num(f.percent_fat);
    if (fat !== null) yield quantity(m, 'fat', 'body_fat_percentage', fat, '%', t, t, false, who);
  }
}
