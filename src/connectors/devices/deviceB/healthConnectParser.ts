import { gunzipSync } from 'node:zlib';
import ucum from '@lhncbc/ucum-lhc';
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
import { findQuantityType } from '../../../catalog/quantityCatalog.js';
import { converter, toStorageUnit, ucumOf } from '../../../catalog/units.js';
import { healthConnectDeviceKind, isBodyWorn, vendorOf } from '../../sources.js';

/**
 * device-b: Android Health Connect (contracts.md §3). The upload is `{"records":[…]}`, gzip or
 * not; each record is named as androidx.health.connect.client.records.* names it. The accepted
 * shapes, the mapping to catalog types and every enumeration table are in docs/formats/device-b.md.
 *
 * Unit-typed properties (Mass, Energy, Length, Temperature, Volume, Pressure, BloodGlucose, Power,
 * Percentage) arrive as objects named after the Kotlin class's own properties: `{"inKilograms": 70.2}`,
 * `{"inFahrenheit": 98.6}`, `{"value": 97}` for Percentage. Values are converted to the storage
 * unit of their quantity type through UCUM (src/catalog/units.ts); the tables below only name the
 * UCUM code of each property.
 */

type Json = Record<string, unknown>;

class RecordError extends Error {}

const MAX_EXCERPT_BYTES = 1024;

// ---------------------------------------------------------------------------------------------
// Unit classes: Kotlin property → UCUM code. The first listed is read first when several are sent.

type UnitClass = 'mass' | 'energy' | 'length' | 'temperature' | 'volume' | 'pressure' | 'bloodGlucose' | 'power' | 'percentage';

const UNIT_PROPERTIES: Readonly<Record<UnitClass, readonly (readonly [property: string, ucum: string])[]>> = {
  mass: [
    ['inKilograms', 'kg'],
    ['inGrams', 'g'],
    ['inMilligrams', 'mg'],
    ['inMicrograms', 'ug'],
    ['inPounds', '[lb_av]'],
    ['inOunces', '[oz_av]'],
  ],
  energy: [
    ['inKilocalories', 'kcal'],
    ['inCalories', 'cal'],
    ['inKilojoules', 'kJ'],
    ['inJoules', 'J'],
  ],
  length: [
    ['inMeters', 'm'],
    ['inKilometers', 'km'],
    ['inMiles', '[mi_i]'],
    ['inFeet', '[ft_i]'],
    ['inInches', '[in_i]'],
  ],
  temperature: [
    ['inCelsius', 'Cel'],
    ['inFahrenheit', '[degF]'],
  ],
  volume: [
    ['inMilliliters', 'mL'],
    ['inLiters', 'L'],
    ['inFluidOuncesUs', '[foz_us]'],
  ],
  pressure: [['inMillimetersOfMercury', 'mm[Hg]']],
  bloodGlucose: [
    ['inMilligramsPerDeciliter', 'mg/dL'],
    ['inMillimolesPerLiter', 'mmol/L'],
  ],
  power: [
    ['inKilocaloriesPerDay', 'kcal/d'],
    ['inWatts', 'W'],
  ],
  percentage: [['value', '%']],
};

const CLASS_NAME: Readonly<Record<UnitClass, string>> = {
  mass: 'Mass',
  energy: 'Energy',
  length: 'Length',
  temperature: 'Temperature',
  volume: 'Volume',
  pressure: 'Pressure',
  bloodGlucose: 'BloodGlucose',
  power: 'Power',
  percentage: 'Percentage',
};

type Measured = { value: number; ucum: string };

function readUnit(obj: unknown, field: string, cls: UnitClass): Measured {
  if (obj === undefined || obj === null) throw new RecordError(`${field} is missing`);
  if (!isObject(obj)) throw new RecordError(`${field} must be a ${CLASS_NAME[cls]} object such as {"${UNIT_PROPERTIES[cls][0]![0]}": …}`);
  for (const [prop, code] of UNIT_PROPERTIES[cls]) {
    if (!(prop in obj)) continue;
    const v = obj[prop];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new RecordError(`${field}.${prop} is not a finite number`);
    return { value: v, ucum: code };
  }
  throw new RecordError(`${field} has no ${CLASS_NAME[cls]} unit property (expected one of ${UNIT_PROPERTIES[cls].map(([p]) => p).join(', ')})`);
}

function readNumber(v: unknown, field: string): number {
  if (v === undefined || v === null) throw new RecordError(`${field} is missing`);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new RecordError(`${field} is not a finite number`);
  return v;
}

/** Glucose molar mass (C6H12O6, g/mol): UCUM needs it to turn an amount of substance into a mass. */
const GLUCOSE_MOLAR_MASS = 180.156;
const ucumUtils = ucum.UcumLhcUtils.getInstance() as unknown as {
  convertUnitTo(from: string, v: number, to: string, options?: { molecularWeight?: number }): { status: string; toVal: number };
};

const stripAnnotations = (u: string) => u.replace(/\{[^}]*\}/g, '') || '1';

/** Storage unit of a catalog type and its UCUM code, looked up once per type (a million samples share a handful). */
const storageCache = new Map<string, { unit: string; ucum: string } | null>();
function storageOf(type: string): { unit: string; ucum: string } | null {
  let s = storageCache.get(type);
  if (s === undefined) {
    const t = findQuantityType(type);
    s = t ? { unit: t.unit, ucum: stripAnnotations(ucumOf(t.unit)) } : null;
    storageCache.set(type, s);
  }
  return s;
}

function roundSignificant(v: number): number {
  return Number(v.toPrecision(12));
}

/**
 * Amounts of substance (blood glucose in mmol/L) and mass concentrations (mg/dL) are not
 * commensurable without a molar mass: UCUM converts them given glucose's. Everything else goes
 * through units.ts. Null when UCUM cannot convert.
 */
function molarConvert(value: number, fromUcum: string, toUcum: string): number | null {
  if (fromUcum.includes('mol') === toUcum.includes('mol')) return null;
  const r = ucumUtils.convertUnitTo(fromUcum, value, toUcum, { molecularWeight: GLUCOSE_MOLAR_MASS });
  return r.status === 'succeeded' ? r.toVal : null;
}

/** A value of a catalog type in its storage unit, with what arrived when the unit differed. */
function toStorage(type: string, m: Measured): { value: number; unit: string; original: { value: number; unit: string } | null } {
  const t = storageOf(type);
  if (!t) throw new RecordError(`quantity type ${type} is not in the catalog`);
  const to = t.ucum;
  const from = m.ucum.includes('{') ? stripAnnotations(m.ucum) : m.ucum;
  if (from === to) return { value: m.value, unit: t.unit, original: null };
  const molar = molarConvert(m.value, from, to);
  if (molar !== null) return { value: roundSignificant(molar), unit: t.unit, original: { value: m.value, unit: m.ucum } };
  try {
    const c = toStorageUnit(type, m.value, m.ucum);
    return { ...c, original: { value: m.value, unit: m.ucum } };
  } catch (err) {
    throw new RecordError(err instanceof Error ? err.message : String(err));
  }
}

/** Converts to a fixed UCUM unit (nutrients, route lengths); throws when UCUM says they are not commensurable. */
function convertTo(m: Measured, toUcum: string, field: string): number {
  if (m.ucum === toUcum) return m.value;
  const fn = converter(m.ucum, toUcum);
  if (!fn) throw new RecordError(`${field}: cannot convert ${m.ucum} to ${toUcum}`);
  return roundSignificant(fn(m.value));
}

// ---------------------------------------------------------------------------------------------
// Bounds: Health Connect's own validation ranges of each record class, in the unit stated.

type Bounds = { min: number; max: number; ucum: string };

/** Bounds in a storage unit, per bounds object and unit. */
const boundsCache = new WeakMap<Bounds, Map<string, { min: number; max: number } | null>>();
function boundsIn(b: Bounds, unit: string): { min: number; max: number } | null {
  let byUnit = boundsCache.get(b);
  if (!byUnit) boundsCache.set(b, (byUnit = new Map()));
  let r = byUnit.get(unit);
  if (r === undefined) {
    const to = stripAnnotations(ucumOf(unit));
    const fn = converter(b.ucum, to);
    const min = fn ? fn(b.min) : molarConvert(b.min, b.ucum, to);
    const max = fn ? fn(b.max) : molarConvert(b.max, b.ucum, to);
    r = min === null || max === null ? null : { min, max };
    byUnit.set(unit, r);
  }
  return r;
}

function checkBounds(type: string, value: number, unit: string, b: Bounds | undefined, field: string) {
  if (!b) return;
  const inUnit = boundsIn(b, unit);
  if (!inUnit) throw new RecordError(`cannot check ${field} in ${unit} against bounds in ${b.ucum}`);
  const { min, max } = inUnit;
  const eps = 1e-9 * Math.max(1, Math.abs(max));
  if (value < min - eps || value > max + eps) {
    throw new RecordError(`${field} ${value} ${unit} is outside ${roundSignificant(min)}..${roundSignificant(max)} ${unit} for ${type}`);
  }
}

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
// Enumerations: Health Connect int constants, also accepted by name (with or without prefix).

/** Normalises an enum name: "STAGE_TYPE_DEEP", "deep", "Deep" → "DEEP" once the prefix is removed. */
function enumName(v: string, prefix: string): string {
  const n = v.trim().toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  return n.startsWith(prefix) ? n.slice(prefix.length) : n;
}

function readEnum<T>(v: unknown, field: string, prefix: string, byInt: ReadonlyMap<number, T>, byName: ReadonlyMap<string, T>): T {
  if (typeof v === 'number' && Number.isInteger(v)) {
    const r = byInt.get(v);
    if (r !== undefined) return r;
  } else if (typeof v === 'string') {
    const r = byName.get(enumName(v, prefix));
    if (r !== undefined) return r;
  }
  throw new RecordError(`${field} ${JSON.stringify(v)} is not a known value`);
}

type StageKind = 'unknown' | 'awake' | 'sleeping' | 'out_of_bed' | 'light' | 'deep' | 'rem' | 'awake_in_bed';

/** SleepSessionRecord.STAGE_TYPE_*. */
const STAGES: readonly (readonly [int: number, name: string, kind: StageKind, phase: SleepPhase['phase']])[] = [
  [0, 'UNKNOWN', 'unknown', 'in_bed'],
  [1, 'AWAKE', 'awake', 'awake'],
  [2, 'SLEEPING', 'sleeping', 'asleep'],
  [3, 'OUT_OF_BED', 'out_of_bed', 'awake'],
  [4, 'LIGHT', 'light', 'light'],
  [5, 'DEEP', 'deep', 'deep'],
  [6, 'REM', 'rem', 'rem'],
  [7, 'AWAKE_IN_BED', 'awake_in_bed', 'in_bed'],
];
type Stage = { kind: StageKind; phase: SleepPhase['phase'] };
const STAGE_BY_INT = new Map<number, Stage>(STAGES.map(([i, , kind, phase]) => [i, { kind, phase }]));
const STAGE_BY_NAME = new Map<string, Stage>(STAGES.map(([, n, kind, phase]) => [n, { kind, phase }]));

/** ExerciseSessionRecord.EXERCISE_TYPE_* → canonical activity. Unknown ints are "other" (as Health Connect itself treats them). */
const EXERCISE_TYPES: readonly (readonly [int: number, name: string, activity: string])[] = [
  [0, 'OTHER_WORKOUT', 'other'],
  [2, 'BADMINTON', 'badminton'],
  [4, 'BASEBALL', 'baseball'],
  [5, 'BASKETBALL', 'basketball'],
  [8, 'BIKING', 'cycling'],
  [9, 'BIKING_STATIONARY', 'indoor_cycling'],
  [10, 'BOOT_CAMP', 'bootcamp'],
  [11, 'BOXING', 'boxing'],
  [13, 'CALISTHENICS', 'calisthenics'],
  [14, 'CRICKET', 'cricket'],
  [16, 'DANCING', 'dance'],
  [25, 'ELLIPTICAL', 'elliptical'],
  [26, 'EXERCISE_CLASS', 'fitness_class'],
  [27, 'FENCING', 'fencing'],
  [28, 'FOOTBALL_AMERICAN', 'american_football'],
  [29, 'FOOTBALL_AUSTRALIAN', 'australian_football'],
  [31, 'FRISBEE_DISC', 'disc_sports'],
  [32, 'GOLF', 'golf'],
  [33, 'GUIDED_BREATHING', 'breathwork'],
  [34, 'GYMNASTICS', 'gymnastics'],
  [35, 'HANDBALL', 'handball'],
  [36, 'HIGH_INTENSITY_INTERVAL_TRAINING', 'hiit'],
  [37, 'HIKING', 'hiking'],
  [38, 'ICE_HOCKEY', 'ice_hockey'],
  [39, 'ICE_SKATING', 'ice_skating'],
  [44, 'MARTIAL_ARTS', 'martial_arts'],
  [46, 'PADDLING', 'paddling'],
  [47, 'PARAGLIDING', 'paragliding'],
  [48, 'PILATES', 'pilates'],
  [50, 'RACQUETBALL', 'racquetball'],
  [51, 'ROCK_CLIMBING', 'climbing'],
  [52, 'ROLLER_HOCKEY', 'roller_hockey'],
  [53, 'ROWING', 'rowing'],
  [54, 'ROWING_MACHINE', 'indoor_rowing'],
  [55, 'RUGBY', 'rugby'],
  [56, 'RUNNING', 'running'],
  [57, 'RUNNING_TREADMILL', 'treadmill_running'],
  [58, 'SAILING', 'sailing'],
  [59, 'SCUBA_DIVING', 'scuba_diving'],
  [60, 'SKATING', 'skating'],
  [61, 'SKIING', 'skiing'],
  [62, 'SNOWBOARDING', 'snowboarding'],
  [63, 'SNOWSHOEING', 'snowshoeing'],
  [64, 'SOCCER', 'soccer'],
  [65, 'SOFTBALL', 'softball'],
  [66, 'SQUASH', 'squash'],
  [68, 'STAIR_CLIMBING', 'stair_climbing'],
  [69, 'STAIR_CLIMBING_MACHINE', 'stair_climbing'],
  [70, 'STRENGTH_TRAINING', 'strength_training'],
  [71, 'STRETCHING', 'stretching'],
  [72, 'SURFING', 'surfing'],
  [73, 'SWIMMING_OPEN_WATER', 'open_water_swimming'],
  [74, 'SWIMMING_POOL', 'swimming'],
  [75, 'TABLE_TENNIS', 'table_tennis'],
  [76, 'TENNIS', 'tennis'],
  [78, 'VOLLEYBALL', 'volleyball'],
  [79, 'WALKING', 'walking'],
  [80, 'WATER_POLO', 'water_polo'],
  [81, 'WEIGHTLIFTING', 'weightlifting'],
  [82, 'WHEELCHAIR', 'wheelchair'],
  [83, 'YOGA', 'yoga'],
];
/** Exported for docs/formats/device-b.md and its tests. */
export const EXERCISE_ACTIVITY: ReadonlyMap<number, { name: string; activity: string }> = new Map(
  EXERCISE_TYPES.map(([i, name, activity]) => [i, { name: `EXERCISE_TYPE_${name}`, activity }]),
);
const EXERCISE_BY_NAME = new Map(EXERCISE_TYPES.map(([i, name, activity]) => [name, { int: i, name: `EXERCISE_TYPE_${name}`, activity }]));

function exerciseActivity(v: unknown): { activity: string; name: string | null } {
  if (typeof v === 'number' && Number.isInteger(v)) {
    const e = EXERCISE_ACTIVITY.get(v);
    return e ? { activity: e.activity, name: e.name } : { activity: 'other', name: null };
  }
  if (typeof v === 'string' && v.trim()) {
    const e = EXERCISE_BY_NAME.get(enumName(v, 'EXERCISE_TYPE_'));
    return e ? { activity: e.activity, name: e.name } : { activity: 'other', name: null };
  }
  throw new RecordError(`exerciseType ${JSON.stringify(v)} is missing or not an int constant or name`);
}

/** MenstruationFlowRecord.FLOW_*. */
const FLOWS: readonly (readonly [int: number, name: string, label: string])[] = [
  [0, 'UNKNOWN', 'unspecified'],
  [1, 'LIGHT', 'light'],
  [2, 'MEDIUM', 'medium'],
  [3, 'HEAVY', 'heavy'],
];
const FLOW_BY_INT = new Map(FLOWS.map(([i, , l]) => [i, l]));
const FLOW_BY_NAME = new Map(FLOWS.map(([, n, l]) => [n, l]));
const FLOW_RANK: Readonly<Record<string, number>> = { unspecified: 0, light: 1, medium: 2, heavy: 3 };

/** MealType.MEAL_TYPE_*; unknown (0) is null. */
const MEALS: readonly (readonly [int: number, name: string, label: string | null])[] = [
  [0, 'UNKNOWN', null],
  [1, 'BREAKFAST', 'breakfast'],
  [2, 'LUNCH', 'lunch'],
  [3, 'DINNER', 'dinner'],
  [4, 'SNACK', 'snack'],
];
const MEAL_BY_INT = new Map(MEALS.map(([i, , l]) => [i, l]));
const MEAL_BY_NAME = new Map(MEALS.map(([, n, l]) => [n, l]));

/** Metadata.RECORDING_METHOD_MANUAL_ENTRY. */
function isManualEntry(v: unknown): boolean {
  return v === 3 || (typeof v === 'string' && enumName(v, 'RECORDING_METHOD_') === 'MANUAL_ENTRY');
}

// ---------------------------------------------------------------------------------------------
// Nutrition: NutritionRecord properties. Named fields of NutritionRecord (records.ts) first.

const NUTRITION_MAIN: Readonly<Record<string, { key: 'energy_kcal' | 'protein_g' | 'carbohydrates_g' | 'fat_g' | 'fiber_g' | 'sugar_g' | 'sodium_mg'; cls: UnitClass; ucum: string }>> = {
  energy: { key: 'energy_kcal', cls: 'energy', ucum: 'kcal' },
  protein: { key: 'protein_g', cls: 'mass', ucum: 'g' },
  totalCarbohydrate: { key: 'carbohydrates_g', cls: 'mass', ucum: 'g' },
  totalFat: { key: 'fat_g', cls: 'mass', ucum: 'g' },
  dietaryFiber: { key: 'fiber_g', cls: 'mass', ucum: 'g' },
  sugar: { key: 'sugar_g', cls: 'mass', ucum: 'g' },
  sodium: { key: 'sodium_mg', cls: 'mass', ucum: 'mg' },
};

/** Other nutrients: stored as `nutrients[snake_case]` in the unit their labels use. */
const NUTRIENT_UNIT: Readonly<Record<string, 'g' | 'mg' | 'mcg' | 'kcal'>> = {
  energyFromFat: 'kcal',
  saturatedFat: 'g',
  unsaturatedFat: 'g',
  monounsaturatedFat: 'g',
  polyunsaturatedFat: 'g',
  transFat: 'g',
  caffeine: 'mg',
  calcium: 'mg',
  chloride: 'mg',
  cholesterol: 'mg',
  copper: 'mg',
  iron: 'mg',
  magnesium: 'mg',
  manganese: 'mg',
  niacin: 'mg',
  pantothenicAcid: 'mg',
  phosphorus: 'mg',
  potassium: 'mg',
  riboflavin: 'mg',
  thiamin: 'mg',
  vitaminB6: 'mg',
  vitaminC: 'mg',
  vitaminE: 'mg',
  zinc: 'mg',
  biotin: 'mcg',
  chromium: 'mcg',
  folate: 'mcg',
  folicAcid: 'mcg',
  iodine: 'mcg',
  molybdenum: 'mcg',
  selenium: 'mcg',
  vitaminA: 'mcg',
  vitaminB12: 'mcg',
  vitaminD: 'mcg',
  vitaminK: 'mcg',
};
const NUTRIENT_UCUM: Readonly<Record<string, string>> = { g: 'g', mg: 'mg', mcg: 'ug', kcal: 'kcal', mL: 'mL' };
const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

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

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

function summariseWorkouts(records: unknown[], workouts: PendingWorkout[]) {
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
  for (const r of records) {
    if (!isObject(r)) continue;
    try {
      const what = interest[recordTypeOf(r.recordType)];
      if (!what) continue;
      const meta = r.metadata;
      const origin = isObject(meta) && isObject(meta.dataOrigin) ? meta.dataOrigin.packageName : undefined;
      const pkg = typeof origin === 'string' ? origin : '';
      if (!byPkg.has(pkg) || !isObject(meta) || typeof meta.id !== 'string' || !meta.id) continue;
      const f = frame(r, 'interval');
      if (what === 'hr') {
        if (!Array.isArray(r.samples) || overlapping(pkg, f.start, f.end).length === 0) continue;
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
        continue;
      }
      const ws = containing(pkg, f.start, f.end);
      if (!ws.length) continue;
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
  }
  for (const w of workouts) {
    w.record.steps = w.steps;
    w.record.distance_m = w.distance;
    w.record.active_energy_kcal = w.energy;
    if (w.hr.n > 0) {
      w.record.avg_heart_rate = round1(w.hr.sum / w.hr.n);
      w.record.max_heart_rate = w.hr.max;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The parser.

function isGzip(b: Buffer): boolean {
  return b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
}

function bodyRejected(reason: string, excerpt: string): ParseItem {
  return { rejected: { location: 'body', reason, excerpt: truncateUtf8(excerpt, MAX_EXCERPT_BYTES) } };
}

/** Decompressed uploads are at most 512 MiB (contracts §3 limits). */
const MAX_BODY_BYTES = 512 * 1024 * 1024;

export const healthConnectParser: DeviceParser = {
  slug: 'device-b',
  async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    let records: unknown[];
    {
      let head = '';
      let body: Buffer;
      try {
        body = isGzip(payload) ? gunzipSync(payload, { maxOutputLength: MAX_BODY_BYTES }) : payload;
      } catch (err) {
        yield bodyRejected(`body is not valid gzip: ${err instanceof Error ? err.message : String(err)}`, payload.subarray(0, 768).toString('base64'));
        return;
      }
      let parsed: unknown;
      try {
        let text = body.toString('utf8');
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        head = text.slice(0, MAX_EXCERPT_BYTES);
        try {
          parsed = JSON.parse(text);
        } catch (err) {
          yield bodyRejected(`body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`, head);
          return;
        }
      } catch (err) {
        // Buffer larger than the longest string V8 can hold.
        yield bodyRejected(`body cannot be read as UTF-8 text: ${err instanceof Error ? err.message : String(err)}`, body.subarray(0, MAX_EXCERPT_BYTES).toString('utf8'));
        return;
      }
      if (!isObject(parsed) || !Array.isArray(parsed.records)) {
        yield bodyRejected('body is not an object with a "records" array', head);
        return;
      }
      records = parsed.records;
    }

    const state: UploadState = { workouts: [], flows: [], periods: [] };
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
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
    }

    if (state.workouts.length) {
      summariseWorkouts(records, state.workouts);
      for (const w of state.workouts) yield { record: w.record };
    }
    for (const cycle of menstrualCycles(state, ctx.provider)) yield { record: cycle };
  },
};
