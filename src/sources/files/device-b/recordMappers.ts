import type { NutritionRecord, ParseContext, ParseItem, RoutePoint, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { SampleSummary } from '../../derivations/workoutSummaries.js';
import { frame, iso, localDate, parseInstant, zoneMetadata } from './healthConnectTimes.js';
import { common, FRAME_FIELDS, quantity, rec, recordTypeOf, rejectItem } from './recordCommon.js';
import { DIASTOLIC_BOUNDS, HEART_RATE_BOUNDS, SCALARS, SYSTOLIC_BOUNDS } from './recordTypes.js';
import { checkBounds, convertTo, readNumber, readUnit, toStorage, type UnitClass } from './unitMapping.js';
import type { UploadState } from './endOfUpload.js';
import { sleepSessionFromStages, type StagedInterval } from './sleepStages.js';
import {
  exerciseActivity,
  FLOW_BY_INT,
  FLOW_BY_NAME,
  MEAL_BY_INT,
  MEAL_BY_NAME,
  NUTRIENT_UCUM,
  NUTRIENT_UNIT,
  NUTRITION_MAIN,
  readEnum,
  snake,
  STAGE_BY_INT,
  STAGE_BY_NAME,
} from './vocabulary.js';

/** Each Health Connect record type onto the normalised records (docs/formats/device-b.md). */

export function parseRecord(r: Json, index: number, ctx: ParseContext, state: UploadState): ParseItem[] {
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
  const staged = stages.map((s: unknown, i: number): StagedInterval => {
    if (!isObject(s)) throw new RecordError(`stages[${i}] is not an object`);
    const start = parseInstant(s.startTime, `stages[${i}].startTime`);
    const end = parseInstant(s.endTime, `stages[${i}].endTime`);
    if (end <= start) throw new RecordError(`stages[${i}].endTime is not after its startTime`);
    if (start < f.start || end > f.end) throw new RecordError(`stages[${i}] is outside the session`);
    return { stage: readEnum(s.stage, `stages[${i}].stage`, 'STAGE_TYPE_', STAGE_BY_INT, STAGE_BY_NAME), start, end };
  });
  return sleepSessionFromStages({ provenance: c.provenance, id: c.id, start: f.start, end: f.end, metadata: { ...c.metadata, ...zoneMetadata(f) } }, staged);
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

export function exerciseSession(r: Json, index: number, ctx: ParseContext, state: UploadState): ParseItem[] {
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
  state.workouts.push({ record, group: c.pkg ?? '', start: f.start, end: f.end, hr: new SampleSummary(), steps: null, distance: null, energy: null });
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
