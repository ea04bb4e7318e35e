import type {
  DeviceParser,
  Metadata,
  MenstrualCycleRecord,
  NormalizedRecord,
  NutritionRecord,
  ParseContext,
  ParseItem,
  Provenance,
  QuantityRecord,
  RejectedItem,
  RoutePoint,
  SleepPhase,
  WorkoutRecord,
} from '../../../../commands/ingestion/records.js';
import { ucumOf } from '../../../catalog/units.js';
import { healthConnectDeviceKind, isBodyWorn, vendorOf } from '../../shared/vendors.js';
import { BodyError, bodyRecords, scanBody, type BodyRecord } from './decodeStream.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { checkBounds, convertTo, readNumber, readUnit, roundSignificant, toStorage, type Bounds, type UnitClass } from './unitMapping.js';
import {
  exerciseActivity,
  FLOW_BY_INT,
  FLOW_BY_NAME,
  FLOW_RANK,
  isManualEntry,
  MEAL_BY_INT,
  MEAL_BY_NAME,
  NUTRIENT_UCUM,
  NUTRIENT_UNIT,
  NUTRITION_MAIN,
  readEnum,
  snake,
  STAGE_BY_INT,
  STAGE_BY_NAME,
  type StageKind,
} from './vocabulary.js';

export { EXERCISE_ACTIVITY } from './vocabulary.js';

/**
 * device-b: Android Health Connect (contracts.md §3). The upload is `{"records":[…]}`, gzip or
 * not; each record is named as androidx.health.connect.client.records.* names it. The accepted
 * shapes, the mapping to catalog types and every enumeration table are in docs/formats/device-b.md.
 *
 * The parts: decodeStream.ts reads the body as a stream of records; unitMapping.ts turns Health
 * Connect's unit objects (`{"inPounds": 154.3}`) into storage units through UCUM and holds the
 * validation ranges; vocabulary.ts holds the int constants (stages, exercise types, flows, meals)
 * and the nutrient tables. This file maps each record type onto the normalised records.
 */

const MAX_EXCERPT_BYTES = 1024;

// ---------------------------------------------------------------------------------------------
// Scalar records: one Health Connect record → one quantity sample.

type ScalarSpec = {
  type: string;
  shape: 'instant' | 'interval';
  field: string;
  /** A unit class, or the UCUM unit of a plain number (Long / Double properties). */
  unit: { cls: UnitClass } | { number: string };
  bounds: Bounds;
};

const SCALARS: Readonly<Record<string, ScalarSpec>> = {
  Steps: { type: 'step_count', shape: 'interval', field: 'count', unit: { number: '1' }, bounds: { min: 0, max: 1_000_000, ucum: '1' } },
  ActiveCaloriesBurned: { type: 'active_energy_burned', shape: 'interval', field: 'energy', unit: { cls: 'energy' }, bounds: { min: 0, max: 1_000_000, ucum: 'kcal' } },
  TotalCaloriesBurned: { type: 'total_energy_burned', shape: 'interval', field: 'energy', unit: { cls: 'energy' }, bounds: { min: 0, max: 1_000_000, ucum: 'kcal' } },
  Distance: { type: 'distance', shape: 'interval', field: 'distance', unit: { cls: 'length' }, bounds: { min: 0, max: 1_000_000, ucum: 'm' } },
  FloorsClimbed: { type: 'flights_climbed', shape: 'interval', field: 'floors', unit: { number: '1' }, bounds: { min: 0, max: 1_000_000, ucum: '1' } },
  Hydration: { type: 'dietary_water', shape: 'interval', field: 'volume', unit: { cls: 'volume' }, bounds: { min: 0, max: 100, ucum: 'L' } },
  Weight: { type: 'body_mass', shape: 'instant', field: 'weight', unit: { cls: 'mass' }, bounds: { min: 0, max: 1000, ucum: 'kg' } },
  Height: { type: 'height', shape: 'instant', field: 'height', unit: { cls: 'length' }, bounds: { min: 0, max: 3, ucum: 'm' } },
  BodyFat: { type: 'body_fat_percentage', shape: 'instant', field: 'percentage', unit: { cls: 'percentage' }, bounds: { min: 0, max: 100, ucum: '%' } },
  OxygenSaturation: { type: 'oxygen_saturation', shape: 'instant', field: 'percentage', unit: { cls: 'percentage' }, bounds: { min: 0, max: 100, ucum: '%' } },
  BodyTemperature: { type: 'body_temperature', shape: 'instant', field: 'temperature', unit: { cls: 'temperature' }, bounds: { min: 0, max: 100, ucum: 'Cel' } },
  RestingHeartRate: { type: 'resting_heart_rate', shape: 'instant', field: 'beatsPerMinute', unit: { number: '/min' }, bounds: { min: 0, max: 300, ucum: '/min' } },
  HeartRateVariabilityRmssd: { type: 'hrv_rmssd', shape: 'instant', field: 'heartRateVariabilityMillis', unit: { number: 'ms' }, bounds: { min: 1, max: 200, ucum: 'ms' } },
  RespiratoryRate: { type: 'respiratory_rate', shape: 'instant', field: 'rate', unit: { number: '/min' }, bounds: { min: 0, max: 1000, ucum: '/min' } },
  BloodGlucose: { type: 'blood_glucose', shape: 'instant', field: 'level', unit: { cls: 'bloodGlucose' }, bounds: { min: 0, max: 50, ucum: 'mmol/L' } },
  Vo2Max: { type: 'vo2_max', shape: 'instant', field: 'vo2MillilitersPerMinuteKilogram', unit: { number: 'mL/(kg.min)' }, bounds: { min: 0, max: 100, ucum: 'mL/(kg.min)' } },
  BasalMetabolicRate: { type: 'basal_metabolic_rate', shape: 'instant', field: 'basalMetabolicRate', unit: { cls: 'power' }, bounds: { min: 0, max: 10_000, ucum: 'kcal/d' } },
};

/** Every record type this parser reads, for docs and tests. */
export const HEALTH_CONNECT_RECORD_TYPES: readonly string[] = [
  'HeartRate',
  ...Object.keys(SCALARS),
  'SleepSession',
  'ExerciseSession',
  'BloodPressure',
  'Nutrition',
  'MenstruationFlow',
  'MenstruationPeriod',
];

const HEART_RATE_BOUNDS: Bounds = { min: 1, max: 300, ucum: '/min' };
const SYSTOLIC_BOUNDS: Bounds = { min: 20, max: 200, ucum: 'mm[Hg]' };
const DIASTOLIC_BOUNDS: Bounds = { min: 10, max: 180, ucum: 'mm[Hg]' };

// ---------------------------------------------------------------------------------------------
// Times.

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)$/;
const ZONE_OFFSET = /^(?:Z|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?)$/;

const DAYS_IN_MONTH: readonly number[] = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Parses an ISO-8601 instant with an explicit offset into epoch milliseconds; calendar-checked. */
function parseInstant(v: unknown, field: string): number {
  if (v === undefined || v === null) throw new RecordError(`${field} is missing`);
  if (typeof v !== 'string') throw new RecordError(`${field} is not an ISO-8601 instant`);
  const m = INSTANT.exec(v);
  if (!m) throw new RecordError(`${field} ${JSON.stringify(v)} is not an ISO-8601 instant with an offset`);
  const y = +m[1]!;
  const mo = +m[2]!;
  const d = +m[3]!;
  const h = +m[4]!;
  const mi = +m[5]!;
  const s = m[6] === undefined ? 0 : +m[6];
  const frac = m[7];
  const ms = frac === undefined ? 0 : frac.length >= 3 ? +frac.slice(0, 3) : +frac.padEnd(3, '0');
  const daysInMonth = mo === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : (DAYS_IN_MONTH[mo] ?? 0);
  if (d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 59) {
    throw new RecordError(`${field} ${JSON.stringify(v)} is not a valid date and time`);
  }
  const z = m[8]!;
  const off = z === 'Z' || z === 'z' ? 0 : offsetMs(z);
  if (off === null) throw new RecordError(`${field} ${JSON.stringify(v)} has an invalid offset`);
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms) - off;
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) throw new RecordError(`${field} ${JSON.stringify(v)} is out of range`);
  return t;
}

function offsetMs(z: string): number | null {
  const m = ZONE_OFFSET.exec(z.toUpperCase());
  if (!m) return null;
  if (!m[1]) return 0;
  const h = Number(m[2]);
  const mi = Number(m[3] ?? 0);
  const s = Number(m[4] ?? 0);
  if (h > 18 || mi > 59 || s > 59) return null;
  const total = ((h * 60 + mi) * 60 + s) * 1000;
  if (total > 18 * 3600 * 1000) return null;
  return m[1] === '-' ? -total : total;
}

/** A ZoneOffset as sent ("+01:00", "Z"), validated; undefined when absent. */
function parseZone(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || offsetMs(v) === null) throw new RecordError(`${field} ${JSON.stringify(v)} is not a zone offset such as "+01:00"`);
  return v;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** The local calendar date of an instant at a zone offset (UTC without one). */
const localDate = (ms: number, zone: string | undefined) => new Date(ms + (zone ? offsetMs(zone)! : 0)).toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------
// Helpers.

function truncateUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s;
  let cut = s.slice(0, maxBytes);
  let bytes = Buffer.byteLength(cut, 'utf8');
  while (bytes > maxBytes) {
    cut = cut.slice(0, cut.length - Math.max(1, Math.floor((bytes - maxBytes) / 3)));
    bytes = Buffer.byteLength(cut, 'utf8');
  }
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut;
}

function excerptOf(v: unknown): string {
  let s: string;
  try {
    s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  return truncateUtf8(s, MAX_EXCERPT_BYTES);
}

const round1 = (v: number) => Math.round(v * 10) / 10;

// ---------------------------------------------------------------------------------------------
// One record's common part: identity, provenance, metadata as sent.

type Common = {
  id: string;
  pkg: string | null;
  provenance: Provenance;
  sample: { source_name: null; source_bundle_id: string | null; device_model: string | null; product_type: null; was_user_entered: boolean };
  /** Provider fields as sent: Health Connect's metadata object's fields plus the record's own unread fields. */
  metadata: Metadata;
};

/** Fields of every record that the parser reads itself (the rest go to metadata as sent). */
const FRAME_FIELDS = new Set(['recordType', 'metadata', 'time', 'startTime', 'endTime', 'zoneOffset', 'startZoneOffset', 'endZoneOffset']);

function recordTypeOf(v: unknown): string {
  if (typeof v !== 'string' || !v.trim()) throw new RecordError('recordType is missing');
  // Also accepts "HeartRateRecord" and "androidx.health.connect.client.records.HeartRateRecord".
  const short = v.trim().slice(v.trim().lastIndexOf('.') + 1);
  return short.endsWith('Record') && short.length > 'Record'.length ? short.slice(0, -'Record'.length) : short;
}

function common(rec: Json, provider: string, consumed: readonly string[]): Common {
  const meta = rec.metadata;
  if (!isObject(meta)) throw new RecordError('metadata is missing');
  const id = meta.id;
  if (typeof id !== 'string' || !id.trim()) throw new RecordError('metadata.id is missing');
  const origin = meta.dataOrigin;
  if (origin !== undefined && origin !== null && !isObject(origin)) throw new RecordError('metadata.dataOrigin is not an object');
  const pkgRaw = isObject(origin) ? origin.packageName : undefined;
  if (pkgRaw !== undefined && pkgRaw !== null && typeof pkgRaw !== 'string') throw new RecordError('metadata.dataOrigin.packageName is not a string');
  const pkg = pkgRaw ? pkgRaw : null;
  const dev = meta.device;
  if (dev !== undefined && dev !== null && !isObject(dev)) throw new RecordError('metadata.device is not an object');
  const manufacturer = isObject(dev) && typeof dev.manufacturer === 'string' && dev.manufacturer.trim() ? dev.manufacturer.trim() : null;
  const model = isObject(dev) && typeof dev.model === 'string' && dev.model.trim() ? dev.model.trim() : null;
  const deviceType = isObject(dev) ? dev.type : undefined;
  if (deviceType !== undefined && deviceType !== null && typeof deviceType !== 'number' && typeof deviceType !== 'string') {
    throw new RecordError('metadata.device.type is not an int or a name');
  }
  const device =
    manufacturer && model
      ? model.toLowerCase().startsWith(manufacturer.toLowerCase())
        ? model
        : `${manufacturer} ${model}`
      : (manufacturer ?? model);

  const metadata: Metadata = { ...meta };
  const skip = new Set([...FRAME_FIELDS, ...consumed]);
  for (const [k, v] of Object.entries(rec)) if (!skip.has(k)) metadata[k] = v;

  return {
    id,
    pkg,
    provenance: {
      provider,
      source: vendorOf(pkg, provider),
      device,
      body_worn: isBodyWorn(healthConnectDeviceKind(deviceType as number | string | null | undefined)),
    },
    sample: { source_name: null, source_bundle_id: pkg, device_model: model, product_type: null, was_user_entered: isManualEntry(meta.recordingMethod) },
    metadata,
  };
}

type Frame = { start: number; end: number; zone: string | undefined; endZone: string | undefined };

function frame(rec: Json, shape: 'instant' | 'interval', strict = false): Frame {
  if (shape === 'instant') {
    const t = parseInstant(rec.time, 'time');
    const zone = parseZone(rec.zoneOffset, 'zoneOffset');
    return { start: t, end: t, zone, endZone: zone };
  }
  const start = parseInstant(rec.startTime, 'startTime');
  const end = parseInstant(rec.endTime, 'endTime');
  if (strict ? end <= start : end < start) throw new RecordError(`endTime is ${strict ? 'not after' : 'before'} startTime`);
  return { start, end, zone: parseZone(rec.startZoneOffset, 'startZoneOffset'), endZone: parseZone(rec.endZoneOffset, 'endZoneOffset') };
}

function zoneMetadata(f: Frame): Metadata {
  const m: Metadata = {};
  if (f.zone !== undefined) m.timezone = f.zone;
  if (f.endZone !== undefined && f.endZone !== f.zone) m.end_timezone = f.endZone;
  return m;
}

function quantity(
  c: Common,
  f: Frame,
  externalId: string,
  type: string,
  v: { value: number; unit: string; original: { value: number; unit: string } | null },
  start = f.start,
  end = f.end,
): QuantityRecord {
  return {
    kind: 'quantity',
    ...c.provenance,
    external_id: externalId,
    type,
    value: v.value,
    unit: v.unit,
    start_date: iso(start),
    end_date: iso(end),
    ...c.sample,
    metadata: {
      ...c.metadata,
      ...zoneMetadata(f),
      // The spec lists both for every sample: what arrived, converted or not.
      original_value: v.original ? v.original.value : v.value,
      original_unit: v.original ? v.original.unit : v.unit,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Upload-wide state: workouts wait for their summaries, cycles for every flow day.

type PendingWorkout = { record: WorkoutRecord; pkg: string | null; start: number; end: number; hr: { sum: number; n: number; max: number }; steps: number | null; distance: number | null; energy: number | null };
type FlowDay = { date: string; flow: string; id: string; c: Common; zone: string | undefined };
type PeriodSpan = { first: string; last: string; id: string; c: Common; zone: string | undefined };
type UploadState = { workouts: PendingWorkout[]; flows: FlowDay[]; periods: PeriodSpan[] };

const rec = (r: NormalizedRecord): ParseItem => ({ record: r });

function rejectItem(index: number, reason: string, excerptSource: unknown): ParseItem {
  const rejected: RejectedItem = { location: `record ${index + 1}`, reason, excerpt: excerptOf(excerptSource) };
  return { rejected };
}

// ---------------------------------------------------------------------------------------------
// Per record type.

function parseRecord(r: Json, index: number, ctx: ParseContext, state: UploadState): ParseItem[] {
  const recordType = recordTypeOf(r.recordType);
  const scalar = SCALARS[recordType];
  if (scalar) {
    const c = common(r, ctx.provider, [scalar.field]);
    const f = frame(r, scalar.shape);
    const raw = r[scalar.field];
    const m = 'cls' in scalar.unit ? readUnit(raw, scalar.field, scalar.unit.cls) : { value: readNumber(raw, scalar.field), ucum: scalar.unit.number };
    const v = toStorage(scalar.type, m);
    checkBounds(scalar.type, v.value, v.unit, scalar.bounds, scalar.field);
    return [rec(quantity(c, f, c.id, scalar.type, v))];
  }
  switch (recordType) {
    case 'HeartRate':
      return heartRate(r, index, ctx);
    case 'SleepSession':
      return [rec(sleepSession(r, ctx))];
    case 'ExerciseSession':
      return exerciseSession(r, index, ctx, state);
    case 'BloodPressure':
      return bloodPressure(r, ctx);
    case 'Nutrition':
      return [rec(nutrition(r, ctx))];
    case 'MenstruationFlow':
      return menstruationFlow(r, ctx, state);
    case 'MenstruationPeriod':
      menstruationPeriod(r, ctx, state);
      return [];
    default:
      throw new RecordError(`unknown recordType ${JSON.stringify(r.recordType)}`);
  }
}

function heartRate(r: Json, index: number, ctx: ParseContext): ParseItem[] {
  const c = common(r, ctx.provider, ['samples']);
  const f = frame(r, 'interval');
  if (!Array.isArray(r.samples)) throw new RecordError('samples is missing or not an array');
  const out: ParseItem[] = [];
  const samples: unknown[] = r.samples;
  // The samples of one record share every metadata field but the value they arrived with.
  const metadata = { ...c.metadata, ...zoneMetadata(f) };
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    try {
      if (!isObject(s)) throw new RecordError('not an object');
      const t = iso(parseInstant(s.time, 'time'));
      const v = toStorage('heart_rate', { value: readNumber(s.beatsPerMinute, 'beatsPerMinute'), ucum: '/min' });
      checkBounds('heart_rate', v.value, v.unit, HEART_RATE_BOUNDS, 'beatsPerMinute');
      out.push({
        record: {
          kind: 'quantity',
          ...c.provenance,
          external_id: `${c.id}:${i}`,
          type: 'heart_rate',
          value: v.value,
          unit: v.unit,
          start_date: t,
          end_date: t,
          ...c.sample,
          metadata: { ...metadata, original_value: v.original ? v.original.value : v.value, original_unit: v.original ? v.original.unit : v.unit },
        },
      });
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      out.push(rejectItem(index, `HeartRate ${c.id} samples[${i}]: ${err.message}`, s));
    }
  }
  return out;
}

function sleepSession(r: Json, ctx: ParseContext) {
  const c = common(r, ctx.provider, ['stages']);
  const f = frame(r, 'interval', true);
  const stages = r.stages ?? [];
  if (!Array.isArray(stages)) throw new RecordError('stages is not an array');
  const seconds: Record<StageKind, number> = { unknown: 0, awake: 0, sleeping: 0, out_of_bed: 0, light: 0, deep: 0, rem: 0, awake_in_bed: 0 };
  const phases: (SleepPhase & { t: number })[] = [];
  stages.forEach((s: unknown, i: number) => {
    if (!isObject(s)) throw new RecordError(`stages[${i}] is not an object`);
    const start = parseInstant(s.startTime, `stages[${i}].startTime`);
    const end = parseInstant(s.endTime, `stages[${i}].endTime`);
    if (end <= start) throw new RecordError(`stages[${i}].endTime is not after its startTime`);
    if (start < f.start || end > f.end) throw new RecordError(`stages[${i}] is outside the session`);
    const stage = readEnum(s.stage, `stages[${i}].stage`, 'STAGE_TYPE_', STAGE_BY_INT, STAGE_BY_NAME);
    seconds[stage.kind] += (end - start) / 1000;
    phases.push({ phase: stage.phase, start_date: iso(start), end_date: iso(end), t: start });
  });
  phases.sort((a, b) => a.t - b.t);
  const staged = stages.length > 0;
  const sec = (n: number) => Math.round(n);
  return {
    kind: 'sleep_session' as const,
    ...c.provenance,
    external_id: c.id,
    bedtime_start: iso(f.start),
    bedtime_end: iso(f.end),
    // A session without stages is, for Health Connect, time asleep as a whole.
    total_sleep_seconds: sec(staged ? seconds.sleeping + seconds.light + seconds.deep + seconds.rem : (f.end - f.start) / 1000),
    deep_sleep_seconds: sec(seconds.deep),
    rem_sleep_seconds: sec(seconds.rem),
    light_sleep_seconds: sec(seconds.light),
    awake_seconds: sec(seconds.awake + seconds.out_of_bed + seconds.awake_in_bed),
    sleep_score: null,
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: null,
    spo2_avg: null,
    phases: phases.map(({ phase, start_date, end_date }) => ({ phase, start_date, end_date })),
    metadata: { ...c.metadata, ...zoneMetadata(f) },
  };
}

function routeOf(r: Json): unknown[] | null {
  const pick = (v: unknown): unknown[] | null | undefined => {
    if (v === undefined || v === null) return undefined;
    if (Array.isArray(v)) return v;
    if (isObject(v)) {
      if (Array.isArray(v.route)) return v.route;
      if (isObject(v.exerciseRoute) && Array.isArray(v.exerciseRoute.route)) return v.exerciseRoute.route;
      if (Object.keys(v).length === 0 || v.type === 'NoData' || v.type === 'ConsentRequired') return null;
    }
    throw new RecordError('exerciseRoute is not an ExerciseRoute {"route": [Location, …]}');
  };
  return pick(r.exerciseRoute) ?? pick(r.exerciseRouteResult) ?? null;
}

function exerciseSession(r: Json, index: number, ctx: ParseContext, state: UploadState): ParseItem[] {
  const c = common(r, ctx.provider, ['exerciseRoute', 'exerciseRouteResult']);
  const f = frame(r, 'interval', true);
  const { activity, name } = exerciseActivity(r.exerciseType);
  const out: ParseItem[] = [];
  const points: (RoutePoint & { t: number })[] = [];
  (routeOf(r) ?? []).forEach((p: unknown, i: number) => {
    try {
      if (!isObject(p)) throw new RecordError('not an object');
      const t = parseInstant(p.time, 'time');
      const lat = readNumber(p.latitude, 'latitude');
      const lon = readNumber(p.longitude, 'longitude');
      if (lat < -90 || lat > 90) throw new RecordError(`latitude ${lat} is outside -90..90`);
      if (lon < -180 || lon > 180) throw new RecordError(`longitude ${lon} is outside -180..180`);
      const len = (v: unknown, field: string) => (v === undefined || v === null ? null : convertTo(readUnit(v, field, 'length'), 'm', field));
      points.push({
        timestamp: iso(t),
        latitude: lat,
        longitude: lon,
        altitude_m: len(p.altitude, 'altitude'),
        speed_mps: null,
        course_deg: null,
        horizontal_accuracy_m: len(p.horizontalAccuracy, 'horizontalAccuracy'),
        t,
      });
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      out.push(rejectItem(index, `ExerciseSession ${c.id} exerciseRoute.route[${i}]: ${err.message}`, p));
    }
  });
  points.sort((a, b) => a.t - b.t);
  const record: WorkoutRecord = {
    kind: 'workout',
    ...c.provenance,
    external_id: c.id,
    type: activity,
    start_date: iso(f.start),
    end_date: iso(f.end),
    duration_s: (f.end - f.start) / 1000,
    active_energy_kcal: null,
    distance_m: null,
    avg_heart_rate: null,
    max_heart_rate: null,
    steps: null,
    route: points.map(({ t: _t, ...p }) => p),
    metadata: { ...c.metadata, ...(name ? { exercise_type_name: name } : {}), ...zoneMetadata(f) },
  };
  state.workouts.push({ record, pkg: c.pkg, start: f.start, end: f.end, hr: { sum: 0, n: 0, max: -Infinity }, steps: null, distance: null, energy: null });
  return out;
}

function bloodPressure(r: Json, ctx: ParseContext): ParseItem[] {
  const c = common(r, ctx.provider, ['systolic', 'diastolic']);
  const f = frame(r, 'instant');
  const sys = toStorage('blood_pressure_systolic', readUnit(r.systolic, 'systolic', 'pressure'));
  checkBounds('blood_pressure_systolic', sys.value, sys.unit, SYSTOLIC_BOUNDS, 'systolic');
  const dia = toStorage('blood_pressure_diastolic', readUnit(r.diastolic, 'diastolic', 'pressure'));
  checkBounds('blood_pressure_diastolic', dia.value, dia.unit, DIASTOLIC_BOUNDS, 'diastolic');
  const metadata = { ...c.metadata, ...zoneMetadata(f) };
  return [
    rec({
      kind: 'observation',
      ...c.provenance,
      external_id: c.id,
      code: 'blood_pressure',
      loinc_code: '85354-9',
      start_date: iso(f.start),
      end_date: iso(f.end),
      components: [
        { code: 'systolic', loinc_code: '8480-6', value: sys.value, unit: sys.unit },
        { code: 'diastolic', loinc_code: '8462-4', value: dia.value, unit: dia.unit },
      ],
      metadata,
    }),
    rec(quantity(c, f, `${c.id}:systolic`, 'blood_pressure_systolic', sys)),
    rec(quantity(c, f, `${c.id}:diastolic`, 'blood_pressure_diastolic', dia)),
  ];
}

function nutrition(r: Json, ctx: ParseContext): NutritionRecord {
  const unitFields = Object.keys(r).filter((k) => !FRAME_FIELDS.has(k) && (k in NUTRITION_MAIN || k in NUTRIENT_UNIT));
  const c = common(r, ctx.provider, [...unitFields, 'name']);
  const f = frame(r, 'interval');
  if (r.name !== undefined && r.name !== null && typeof r.name !== 'string') throw new RecordError('name is not a string');
  const mealType = r.mealType === undefined || r.mealType === null ? null : readEnum(r.mealType, 'mealType', 'MEAL_TYPE_', MEAL_BY_INT, MEAL_BY_NAME);
  const main: Record<string, number | null> = { energy_kcal: null, protein_g: null, carbohydrates_g: null, fat_g: null, fiber_g: null, sugar_g: null, sodium_mg: null };
  const nutrients: Record<string, { value: number; unit: string }> = {};
  const originals: Record<string, { value: number; unit: string }> = {};
  for (const field of unitFields) {
    const raw = r[field];
    if (raw === null) continue;
    const spec = NUTRITION_MAIN[field];
    const cls: UnitClass = spec ? spec.cls : NUTRIENT_UNIT[field] === 'kcal' ? 'energy' : 'mass';
    const m = readUnit(raw, field, cls);
    if (m.value < 0) throw new RecordError(`${field} is negative`);
    const toUcum = spec ? spec.ucum : NUTRIENT_UCUM[NUTRIENT_UNIT[field]!]!;
    const value = convertTo(m, toUcum, field);
    if (m.ucum !== toUcum) originals[field] = { value: m.value, unit: m.ucum };
    if (spec) main[spec.key] = value;
    else nutrients[snake(field)] = { value, unit: NUTRIENT_UNIT[field]! };
  }
  return {
    kind: 'nutrition',
    ...c.provenance,
    external_id: c.id,
    start_date: iso(f.start),
    end_date: iso(f.end),
    name: typeof r.name === 'string' ? r.name : null,
    meal_type: mealType,
    energy_kcal: main.energy_kcal!,
    protein_g: main.protein_g!,
    carbohydrates_g: main.carbohydrates_g!,
    fat_g: main.fat_g!,
    fiber_g: main.fiber_g!,
    sugar_g: main.sugar_g!,
    sodium_mg: main.sodium_mg!,
    water_ml: null,
    nutrients,
    metadata: { ...c.metadata, ...zoneMetadata(f), ...(Object.keys(originals).length ? { original_values: originals } : {}) },
  };
}

function menstruationFlow(r: Json, ctx: ParseContext, state: UploadState): ParseItem[] {
  const c = common(r, ctx.provider, []);
  const f = frame(r, 'instant');
  const flow = r.flow === undefined || r.flow === null ? 'unspecified' : readEnum(r.flow, 'flow', 'FLOW_', FLOW_BY_INT, FLOW_BY_NAME);
  state.flows.push({ date: localDate(f.start, f.zone), flow, id: c.id, c, zone: f.zone });
  return [
    rec({
      kind: 'category',
      ...c.provenance,
      external_id: c.id,
      type: 'menstrual_flow',
      value: flow,
      start_date: iso(f.start),
      end_date: iso(f.end),
      ...c.sample,
      metadata: { ...c.metadata, ...zoneMetadata(f) },
    }),
  ];
}

function menstruationPeriod(r: Json, ctx: ParseContext, state: UploadState) {
  const c = common(r, ctx.provider, []);
  const f = frame(r, 'interval', true);
  const first = localDate(f.start, f.zone);
  // endTime is exclusive: a period ending at local midnight ends the day before.
  const last = localDate(f.end - 1, f.endZone ?? f.zone);
  state.periods.push({ first, last: last < first ? first : last, id: c.id, c, zone: f.zone });
}

// ---------------------------------------------------------------------------------------------
// End of upload: menstrual cycles (contracts §3 device-b grouping rule).

const DAY_MS = 86_400_000;
const dayNo = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
const dateOf = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

/**
 * Groups flow days and periods per app (dataOrigin.packageName) into cycles: a cycle starts at a
 * flow day after at least 2 days without flow, or at a MenstruationPeriod's first day. A period's
 * days count as bleeding days; the period ends at the cycle's last bleeding day.
 */
function menstrualCycles(state: Pick<UploadState, 'flows' | 'periods'>, provider: string): MenstrualCycleRecord[] {
  const byPkg = new Map<string, { flows: FlowDay[]; periods: PeriodSpan[] }>();
  const group = (c: Common) => {
    const key = c.pkg ?? '';
    let g = byPkg.get(key);
    if (!g) byPkg.set(key, (g = { flows: [], periods: [] }));
    return g;
  };
  for (const fd of state.flows) group(fd.c).flows.push(fd);
  for (const p of state.periods) group(p.c).periods.push(p);

  const out: MenstrualCycleRecord[] = [];
  for (const [pkg, g] of byPkg) {
    type Day = { flow: string | null; ids: Set<string>; c: Common; zone: string | undefined; periodStart: boolean };
    const days = new Map<number, Day>();
    const day = (n: number, c: Common, zone: string | undefined) => {
      let d = days.get(n);
      if (!d) days.set(n, (d = { flow: null, ids: new Set(), c, zone, periodStart: false }));
      return d;
    };
    for (const fd of g.flows) {
      const d = day(dayNo(fd.date), fd.c, fd.zone);
      if (d.flow === null || FLOW_RANK[fd.flow]! > FLOW_RANK[d.flow]!) d.flow = fd.flow;
      d.ids.add(fd.id);
    }
    for (const p of g.periods) {
      const a = dayNo(p.first);
      const b = dayNo(p.last);
      for (let n = a; n <= b; n++) day(n, p.c, p.zone).ids.add(p.id);
      day(a, p.c, p.zone).periodStart = true;
    }
    const sorted = [...days.keys()].sort((a, b) => a - b);
    const cycles: { start: number; last: number; days: number[] }[] = [];
    let prev: number | null = null;
    for (const n of sorted) {
      const startsCycle = prev === null || n - prev - 1 >= 2 || days.get(n)!.periodStart;
      if (startsCycle) cycles.push({ start: n, last: n, days: [n] });
      else {
        const cur = cycles[cycles.length - 1]!;
        cur.last = n;
        cur.days.push(n);
      }
      prev = n;
    }
    cycles.forEach((cy, i) => {
      const first = days.get(cy.start)!;
      const flow: Record<string, string> = {};
      const ids = new Set<string>();
      for (const n of cy.days) {
        const d = days.get(n)!;
        if (d.flow !== null) flow[dateOf(n)] = d.flow;
        for (const id of d.ids) ids.add(id);
      }
      const next = cycles[i + 1];
      const start = dateOf(cy.start);
      out.push({
        kind: 'menstrual_cycle',
        provider,
        source: first.c.provenance.source,
        device: first.c.provenance.device,
        body_worn: first.c.provenance.body_worn,
        external_id: `cycle:${pkg || provider}:${start}`,
        start_date: start,
        period_end_date: dateOf(cy.last),
        period_length_days: cy.last - cy.start + 1,
        cycle_length_days: next ? next.start - cy.start : null,
        flow,
        metadata: {
          ...(pkg ? { dataOrigin: { packageName: pkg } } : {}),
          record_ids: [...ids].sort(),
          ...(first.zone !== undefined ? { timezone: first.zone } : {}),
        },
      });
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// End of upload: workout summaries from the same app's records inside the session.

/**
 * Adds records to the summaries of the upload's workouts, one at a time in upload order (the sums
 * are floating point: the order is part of the result), then writes the summaries into them.
 */
function workoutSummaries(workouts: PendingWorkout[]): { add(r: unknown): void; finish(): void } {
  const byPkg = new Map<string, { list: PendingWorkout[]; maxDur: number }>();
  for (const w of workouts) {
    const key = w.pkg ?? '';
    let g = byPkg.get(key);
    if (!g) byPkg.set(key, (g = { list: [], maxDur: 0 }));
    g.list.push(w);
    g.maxDur = Math.max(g.maxDur, w.end - w.start);
  }
  for (const g of byPkg.values()) g.list.sort((a, b) => a.start - b.start);
  /** Workouts of the app starting at or before `e` and ending at or after `s`, i.e. overlapping [s, e]. */
  const overlapping = (pkg: string, s: number, e: number): PendingWorkout[] => {
    const g = byPkg.get(pkg);
    if (!g) return [];
    let lo = 0;
    let hi = g.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (g.list[mid]!.start <= e) lo = mid + 1;
      else hi = mid;
    }
    const found: PendingWorkout[] = [];
    // No workout starting before s - maxDur can still be running at s.
    for (let i = lo - 1; i >= 0 && g.list[i]!.start >= s - g.maxDur; i--) {
      const w = g.list[i]!;
      if (w.end >= s) found.push(w);
    }
    return found;
  };
  /** Workouts of the app that contain [s, e] entirely. */
  const containing = (pkg: string, s: number, e: number) => overlapping(pkg, s, e).filter((w) => w.start <= s && e <= w.end);
  const interest: Readonly<Record<string, 'steps' | 'distance' | 'energy' | 'hr'>> = {
    Steps: 'steps',
    Distance: 'distance',
    ActiveCaloriesBurned: 'energy',
    HeartRate: 'hr',
  };
  const add = (r: unknown) => {
    if (!isObject(r)) return;
    try {
      const what = interest[recordTypeOf(r.recordType)];
      if (!what) return;
      const meta = r.metadata;
      const origin = isObject(meta) && isObject(meta.dataOrigin) ? meta.dataOrigin.packageName : undefined;
      const pkg = typeof origin === 'string' ? origin : '';
      if (!byPkg.has(pkg) || !isObject(meta) || typeof meta.id !== 'string' || !meta.id) return;
      const f = frame(r, 'interval');
      if (what === 'hr') {
        if (!Array.isArray(r.samples) || overlapping(pkg, f.start, f.end).length === 0) return;
        for (const s of r.samples) {
          if (!isObject(s)) continue;
          try {
            const t = parseInstant(s.time, 'time');
            const bpm = readNumber(s.beatsPerMinute, 'beatsPerMinute');
            if (bpm < HEART_RATE_BOUNDS.min || bpm > HEART_RATE_BOUNDS.max) continue;
            for (const w of containing(pkg, t, t)) {
              w.hr.sum += bpm;
              w.hr.n++;
              w.hr.max = Math.max(w.hr.max, bpm);
            }
          } catch (err) {
            if (!(err instanceof RecordError)) throw err;
          }
        }
        return;
      }
      const ws = containing(pkg, f.start, f.end);
      if (!ws.length) return;
      const spec = SCALARS[recordTypeOf(r.recordType)]!;
      const raw = r[spec.field];
      const m = 'cls' in spec.unit ? readUnit(raw, spec.field, spec.unit.cls) : { value: readNumber(raw, spec.field), ucum: spec.unit.number };
      const v = toStorage(spec.type, m);
      checkBounds(spec.type, v.value, v.unit, spec.bounds, spec.field);
      const value = what === 'distance' ? convertTo({ value: v.value, ucum: ucumOf(v.unit) }, 'm', 'distance') : what === 'energy' ? convertTo({ value: v.value, ucum: ucumOf(v.unit) }, 'kcal', 'energy') : v.value;
      for (const w of ws) w[what] = roundSignificant((w[what] ?? 0) + value);
    } catch (err) {
      // Already reported by the main pass.
      if (!(err instanceof RecordError)) throw err;
    }
  };
  const finish = () => {
    for (const w of workouts) {
      w.record.steps = w.steps;
      w.record.distance_m = w.distance;
      w.record.active_energy_kcal = w.energy;
      if (w.hr.n > 0) {
        w.record.avg_heart_rate = round1(w.hr.sum / w.hr.n);
        w.record.max_heart_rate = w.hr.max;
      }
    }
  };
  return { add, finish };
}


// ---------------------------------------------------------------------------------------------
// The parser.

function bodyRejected(reason: string, excerpt: string): ParseItem {
  return { rejected: { location: 'body', reason, excerpt: truncateUtf8(excerpt, MAX_EXCERPT_BYTES) } };
}

/**
 * The body is streamed twice (decodeStream.ts), so that memory follows the largest record, not
 * the upload:
 *
 * 1. A scan that yields nothing. A body that is not gzip, not JSON or has no `records` array is
 *    ONE rejected item and nothing of it is stored, and the byte that breaks it may be the last
 *    one: only a body read to its end may give records. The scan also builds the workouts,
 *    whose summaries take records from anywhere in the upload, before or after the session.
 * 2. The records, each normalised and yielded as soon as it is parsed, and added to the
 *    workouts' summaries on the way.
 *
 * The price is inflating and tokenizing the body twice, instead of holding it.
 */
export const healthConnectParser: DeviceParser = {
  slug: 'device-b',
  async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    // Only the last `records` member counts (as with JSON.parse), and it is known at the end.
    let scanned = { member: 0, workouts: [] as PendingWorkout[] };
    const scanRecord = ({ member, index, record: r }: BodyRecord) => {
      if (member !== scanned.member) scanned = { member, workouts: [] };
      if (!isObject(r)) return;
      try {
        if (recordTypeOf(r.recordType) === 'ExerciseSession') exerciseSession(r, index, ctx, { workouts: scanned.workouts, flows: [], periods: [] });
      } catch (err) {
        // Reported where pass 2 meets the record.
        if (!(err instanceof RecordError)) throw err;
      }
    };
    let members: number;
    try {
      members = await scanBody(payload, scanRecord);
    } catch (err) {
      if (!(err instanceof BodyError)) throw err;
      yield bodyRejected(err.message, err.excerpt);
      return;
    }
    const workouts = scanned.member === members ? scanned.workouts : [];
    const summaries = workouts.length ? workoutSummaries(workouts) : null;

    // Pass 2 builds each workout again to report its route's bad points in place; the scan's
    // copies are the ones that collect the summaries and are yielded.
    const state: UploadState = { workouts: [], flows: [], periods: [] };
    for await (const { index: i, record: r } of bodyRecords(payload, members)) {
      let items: ParseItem[];
      try {
        if (!isObject(r)) throw new RecordError('record is not an object');
        items = parseRecord(r, i, ctx, state);
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        const id = isObject(r) && isObject(r.metadata) && typeof r.metadata.id === 'string' ? ` ${r.metadata.id}` : '';
        const type = isObject(r) && typeof r.recordType === 'string' ? r.recordType : 'record';
        items = [rejectItem(i, `${type}${id}: ${err.message}`, r)];
      }
      for (const item of items) yield item;
      summaries?.add(r);
    }

    if (summaries) {
      summaries.finish();
      for (const w of workouts) yield { record: w.record };
    }
    for (const cycle of menstrualCycles(state, ctx.provider)) yield { record: cycle };
  },
};
