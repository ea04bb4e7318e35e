import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type {
  CategoryRecord,
  DeviceParser,
  EcgRecord,
  HeartbeatSeriesRecord,
  MenstrualCycleRecord,
  Metadata,
  NutritionRecord,
  ObservationRecord,
  ParseItem,
  QuantityRecord,
  RoutePoint,
  SleepPhase,
  SleepSessionRecord,
  WorkoutRecord,
} from '../../../../commands/ingestion/records.js';
import { findQuantityType, quantityTypeForHealthKit, type QuantityType } from '../../../catalog/quantityCatalog.js';
import { converter, storageUnitConverter, ucumOf } from '../../../catalog/units.js';
import { boundedCache, boundedMemo, type BoundedCache } from '../../../shared/boundedCache.js';
import { canonicalTimeZone } from '../../../shared/timeZones.js';
import { healthKitDeviceKind, isBodyWorn, vendorOf } from '../../sources.js';

/**
 * device-a: iOS HealthKit uploads (contracts.md §3). The payload is gzip of NDJSON, one object per
 * line, in HealthKit's own names (HKQuantitySample, HKCategorySample, HKWorkout,
 * HKElectrocardiogram, HKHeartbeatSeriesSample, HKCorrelation; property names in snake_case).
 * The line shapes are documented in docs/formats/device-a.md.
 *
 * The parser streams: gunzip → line split → JSON.parse per line → one record (or rejected item)
 * per line, yielded at once. Only sleep-analysis and menstrual-flow samples are remembered (as
 * small tuples), because sleep sessions and cycles need the whole upload; they come at the end.
 */

/** A line longer than this is rejected without being assembled (an ECG line is ~150 KB). */
const MAX_LINE_CHARS = 32 * 1024 * 1024;
/** Sleep samples further apart than this start a new night (a new sleep session). */
const SLEEP_GAP_MS = 2 * 60 * 60 * 1000;
const DAY_MS = 86_400_000;

/** A line that cannot be stored; the message is the rejected item's reason. */
export class LineError extends Error {
  override name = 'LineError';
}
function fail(reason: string): never {
  throw new LineError(reason);
}

type Obj = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function strOrNull(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function finite(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** At most `maxBytes` bytes of UTF-8, cut on a character boundary (rejected items' excerpt). */
export function excerptOf(s: string, maxBytes = 1024): string {
  if (s.length * 3 <= maxBytes) return s;
  let bytes = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const n = c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 4 : 3;
    if (bytes + n > maxBytes) break;
    bytes += n;
    if (n === 4) i++;
  }
  return s.slice(0, i);
}

/** PascalCase → snake_case, keeping acronyms together: AsleepREM → asleep_rem, VO2Max → vo2_max. */
function snake(pascal: string): string {
  return pascal
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let k = 0; k < n; k++) {
    const c = s.charCodeAt(at + k) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/**
 * Epoch milliseconds of a date-time with a zone, NaN otherwise. Accepts RFC 3339
 * (`2026-11-01T08:00:00Z`, `…T08:00:00.250+01:00`) and HealthKit's export form
 * (`2026-11-01 08:00:00 +0100`). A time without a zone is ambiguous and invalid, as is a day the
 * month lacks (Date.parse would roll 02-30 into March). Hand-written for speed: two dates per line.
 */
export function parseHealthKitDate(s: unknown): number {
  if (typeof s !== 'string' || s.length < 20) return NaN;
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116 && t !== 32) return NaN;
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  const h = digits(s, 11, 2);
  const mi = digits(s, 14, 2);
  const se = digits(s, 17, 2);
  if (y < 1000 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) return NaN;
  let i = 19;
  let ms = 0;
  if (s.charCodeAt(i) === 46) {
    i++;
    const from = i;
    let scale = 100;
    for (let c = s.charCodeAt(i) - 48; c >= 0 && c <= 9; c = s.charCodeAt(++i) - 48) {
      ms += c * scale;
      scale /= 10;
    }
    if (i === from) return NaN;
    ms = Math.floor(ms);
  }
  if (s.charCodeAt(i) === 32) i++;
  const z = s.charCodeAt(i);
  let offsetMin = 0;
  if (z === 90 || z === 122) i++;
  else if (z === 43 || z === 45) {
    const oh = digits(s, i + 1, 2);
    let j = i + 3;
    if (s.charCodeAt(j) === 58) j++;
    const om = digits(s, j, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return NaN;
    offsetMin = (oh * 60 + om) * (z === 43 ? 1 : -1);
    i = j + 2;
  } else return NaN;
  if (i !== s.length) return NaN;
  return Date.UTC(y, mo - 1, d, h, mi, se, ms) - offsetMin * 60_000;
}

/**
 * `toISOString()` of a date parseHealthKitDate accepted. Most lines already carry the canonical
 * UTC form (`…T08:00:00Z` or `…T08:00:00.000Z`), which is rebuilt from the string: a Date and its
 * toISOString cost more per line than JSON.parse of the rest of it.
 */
function isoOf(s: string, ms: number): string {
  if (s.charCodeAt(10) === 84) {
    if (s.length === 20 && s.charCodeAt(19) === 90) return `${s.slice(0, 19)}.000Z`;
    if (s.length === 24 && s.charCodeAt(19) === 46 && s.charCodeAt(23) === 90) return s;
  }
  return new Date(ms).toISOString();
}

function sha32(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

// ---------------------------------------------------------------------------------------------
// Provenance (records.ts Provenance; docs/sources.md)
// ---------------------------------------------------------------------------------------------

type Prov = {
  /** Grouping key of one HealthKit source on one device (sleep nights, cycles). */
  key: string;
  provider: string;
  source: string;
  device: string | null;
  body_worn: boolean;
  source_name: string | null;
  source_bundle_id: string | null;
  device_model: string | null;
  product_type: string | null;
  /** The device's manufacturer where the format tells it (part of the key only then). */
  maker: string | null;
};

function deviceLabel(model: string | null, productType: string | null): string | null {
  if (model && productType) return `${model} (${productType})`;
  return model ?? productType;
}

// ---------------------------------------------------------------------------------------------
// Category types and values (HKCategoryTypeIdentifier…, HKCategoryValue…)
// ---------------------------------------------------------------------------------------------

type CategoryType = {
  type: string;
  /** HealthKit's name without the identifier prefix, e.g. SleepAnalysis. */
  pascal: string;
  /** Closed value sets: every accepted spelling → canonical value; other values are rejected. */
  closed: ReadonlyMap<string, string> | null;
  /** Canonical value per value sent (null: rejected); bounded, values are strangers' strings. */
  cache: BoundedCache<string | null>;
};

const CATEGORY_PREFIX = 'HKCategoryTypeIdentifier';
const CATEGORY_VALUE_PREFIX = 'HKCategoryValue';

/** Sleep analysis (HKCategoryValueSleepAnalysis): names and raw integers as HealthKit defines them. */
const SLEEP_VALUES: ReadonlyMap<string, string> = new Map([
  ['HKCategoryValueSleepAnalysisInBed', 'in_bed'],
  ['HKCategoryValueSleepAnalysisAsleepUnspecified', 'asleep_unspecified'],
  ['HKCategoryValueSleepAnalysisAsleep', 'asleep_unspecified'], // deprecated alias (iOS < 16), raw value 1
  ['HKCategoryValueSleepAnalysisAwake', 'awake'],
  ['HKCategoryValueSleepAnalysisAsleepCore', 'asleep_core'],
  ['HKCategoryValueSleepAnalysisAsleepDeep', 'asleep_deep'],
  ['HKCategoryValueSleepAnalysisAsleepREM', 'asleep_rem'],
  ['0', 'in_bed'],
  ['1', 'asleep_unspecified'],
  ['2', 'awake'],
  ['3', 'asleep_core'],
  ['4', 'asleep_deep'],
  ['5', 'asleep_rem'],
]);

/** Menstrual flow (HKCategoryValueMenstrualFlow). */
const MENSTRUAL_VALUES: ReadonlyMap<string, string> = new Map([
  ['HKCategoryValueMenstrualFlowUnspecified', 'unspecified'],
  ['HKCategoryValueMenstrualFlowLight', 'light'],
  ['HKCategoryValueMenstrualFlowMedium', 'medium'],
  ['HKCategoryValueMenstrualFlowHeavy', 'heavy'],
  ['HKCategoryValueMenstrualFlowNone', 'none'],
  ['1', 'unspecified'],
  ['2', 'light'],
  ['3', 'medium'],
  ['4', 'heavy'],
  ['5', 'none'],
]);

/** Category types whose canonical name is not the plain snake_case of HealthKit's. */
const CATEGORY_NAMES: Readonly<Record<string, string>> = {
  AppleStandHour: 'stand_hour',
  MindfulSession: 'mindful_session',
  SleepAnalysis: 'sleep_analysis',
  MenstrualFlow: 'menstrual_flow',
};

const CLOSED_VALUES: Readonly<Record<string, ReadonlyMap<string, string>>> = {
  SleepAnalysis: SLEEP_VALUES,
  MenstrualFlow: MENSTRUAL_VALUES,
};

/**
 * Category types by identifier as uploaded (null: not a category identifier). Identifiers and values
 * are strangers' strings, so both caches are bounded (HealthKit has some 70 category types, each
 * with a handful of values); an evicted type is rebuilt with an empty value cache.
 */
const categoryTypes = boundedMemo(
  (identifier): CategoryType | null => {
    if (identifier.startsWith(CATEGORY_PREFIX) && identifier.length > CATEGORY_PREFIX.length) {
      const pascal = identifier.slice(CATEGORY_PREFIX.length);
      if (/^[A-Z][A-Za-z0-9]*$/.test(pascal)) {
        return { type: CATEGORY_NAMES[pascal] ?? snake(pascal), pascal, closed: CLOSED_VALUES[pascal] ?? null, cache: boundedCache({ max: 64 }) };
      }
    }
    return null;
  },
  { max: 256 },
);

function categoryTypeOf(identifier: string): CategoryType | null {
  return categoryTypes(identifier);
}

/**
 * Canonical value of a category sample. Sleep analysis and menstrual flow have closed value sets
 * (grouping depends on them). Other types: `HKCategoryValue<Type><Name>` → snake of Name
 * (HKCategoryValueAppleStandHourStood → stood), `HKCategoryValueSeverityMild` → mild,
 * `HKCategoryValueNotApplicable` → not_applicable, a raw integer → its decimal string.
 */
function categoryValueOf(t: CategoryType, raw: unknown): string | null {
  let key: string;
  if (typeof raw === 'string' && raw !== '') key = raw;
  else if (typeof raw === 'number' && Number.isInteger(raw)) key = String(raw);
  else return null;
  return t.cache.get(key, () => {
    if (t.closed) return t.closed.get(key) ?? null;
    if (/^-?\d+$/.test(key)) return key;
    if (key.startsWith(CATEGORY_VALUE_PREFIX)) {
      let rest = key.slice(CATEGORY_VALUE_PREFIX.length);
      for (const p of [t.pascal, 'Severity', 'Presence']) {
        if (rest.startsWith(p) && rest.length > p.length) {
          rest = rest.slice(p.length);
          break;
        }
      }
      return /^[A-Z][A-Za-z0-9]*$/.test(rest) ? snake(rest) : null;
    }
    return /^[a-z][a-z0-9_]*$/.test(key) ? key : null;
  });
}

// ---------------------------------------------------------------------------------------------
// Workouts
// ---------------------------------------------------------------------------------------------

const ACTIVITY_PREFIX = 'HKWorkoutActivityType';
/** Activity types whose canonical name differs from the snake_case of HealthKit's. */
const ACTIVITY_NAMES: Readonly<Record<string, string>> = {
  TraditionalStrengthTraining: 'strength_training',
  FunctionalStrengthTraining: 'strength_training',
};
/** Canonical activity per activity type as uploaded: strangers' strings, so bounded (HealthKit has ~80). */
const activities = boundedMemo(
  (raw): string => {
    const pascal = raw.startsWith(ACTIVITY_PREFIX) ? raw.slice(ACTIVITY_PREFIX.length) : '';
    return /^[A-Z][A-Za-z0-9]*$/.test(pascal) ? (ACTIVITY_NAMES[pascal] ?? snake(pascal)) : 'other';
  },
  { max: 256 },
);

function activityOf(raw: unknown): string {
  return typeof raw === 'string' ? activities(raw) : 'other';
}

/** Distance statistics of HKWorkout, tried in order when `total_distance` is absent. */
const DISTANCE_STATISTICS = [
  'HKQuantityTypeIdentifierDistanceWalkingRunning',
  'HKQuantityTypeIdentifierDistanceCycling',
  'HKQuantityTypeIdentifierDistanceSwimming',
  'HKQuantityTypeIdentifierDistanceWheelchair',
  'HKQuantityTypeIdentifierDistanceDownhillSnowSports',
];

/** HKElectrocardiogram.Classification raw values, for `classification_value` when not sent. */
const ECG_CLASSIFICATION_VALUES: Readonly<Record<string, number>> = {
  notSet: 0,
  sinusRhythm: 1,
  atrialFibrillation: 2,
  inconclusiveLowHeartRate: 3,
  inconclusiveHighHeartRate: 4,
  inconclusivePoorReading: 5,
  inconclusiveOther: 6,
  unrecognized: 100,
};

// ---------------------------------------------------------------------------------------------
// Food correlation members → NutritionRecord fields
// ---------------------------------------------------------------------------------------------

type NutritionField = 'energy_kcal' | 'protein_g' | 'carbohydrates_g' | 'fat_g' | 'fiber_g' | 'sugar_g' | 'sodium_mg' | 'water_ml';
const NUTRITION_FIELDS: Readonly<Record<string, NutritionField>> = {
  HKQuantityTypeIdentifierDietaryEnergyConsumed: 'energy_kcal',
  HKQuantityTypeIdentifierDietaryProtein: 'protein_g',
  HKQuantityTypeIdentifierDietaryCarbohydrates: 'carbohydrates_g',
  HKQuantityTypeIdentifierDietaryFatTotal: 'fat_g',
  HKQuantityTypeIdentifierDietaryFiber: 'fiber_g',
  HKQuantityTypeIdentifierDietarySugar: 'sugar_g',
  HKQuantityTypeIdentifierDietarySodium: 'sodium_mg',
  HKQuantityTypeIdentifierDietaryWater: 'water_ml',
};
const DIETARY_PREFIX = 'HKQuantityTypeIdentifierDietary';
/** Units other nutrients are brought to (records.ts NutritionRecord.nutrients), by dimension. */
const NUTRIENT_UNITS = ['g', 'mg', 'mcg', 'kcal', 'mL'];
const NUTRIENT_TARGETS = ['g', 'kcal', 'mL'];

// ---------------------------------------------------------------------------------------------
// Per-upload state
// ---------------------------------------------------------------------------------------------

type SleepMember = { prov: Prov; s: number; e: number; uuid: string; value: string; tz: string | null };
type FlowMember = { prov: Prov; date: string; value: string; uuid: string; tz: string | null };

const SLEEP_PHASES: Readonly<Record<string, SleepPhase['phase']>> = {
  asleep_deep: 'deep',
  asleep_rem: 'rem',
  asleep_core: 'light',
  awake: 'awake',
  asleep_unspecified: 'asleep',
  in_bed: 'in_bed',
};
const FLOW_RANK: Readonly<Record<string, number>> = { unspecified: 1, light: 2, medium: 3, heavy: 4 };

/**
 * The state of one upload: provenance and unit-converter caches, and the sleep and menstrual-flow
 * samples whose sessions and cycles need the whole upload. Exported for the other HealthKit format
 * (the Health app's export.xml, src/sources/files/apple-health/), which maps its elements to these
 * line objects and shares the vocabulary, units and derivations.
 */
export class Upload {
  /**
   * Provenances by key. An upload is a stream of any length and its source names and device models
   * are the uploader's strings, so this is bounded too (an evicted provenance is rebuilt equal:
   * grouping goes by `key`, never by identity).
   */
  private readonly provs = boundedCache<Prov>({ maxKeyLength: 1024 });
  /** Consecutive lines mostly share a source: the last provenance is checked first. */
  private last: Prov | null = null;
  /** Per catalog type (a fixed vocabulary, so a Map), then per unit as sent (bounded). */
  private readonly converters = new Map<QuantityType, BoundedCache<((v: number) => number) | null>>();
  readonly sleep: SleepMember[] = [];
  /** A sample sent twice in one upload counts once in its night. */
  readonly sleepUuids = new Set<string>();
  readonly flow: FlowMember[] = [];

  /**
   * `vendorOf` names the vendor of a line with no known bundle id (export.xml carries none; its
   * device manufacturer or source name tell instead); null leaves the provider as the source. It
   * may read source_name, device_model, product_type and device_manufacturer (the cache key).
   */
  constructor(
    readonly provider: string,
    private readonly vendorOf: ((o: Obj) => string | null) | null = null,
  ) {}

  /** Provenance of a line, cached per (bundle, name, model, product type): a handful per upload. */
  prov(o: Obj): Prov {
    const bundle = strOrNull(o.source_bundle_id);
    const name = strOrNull(o.source_name);
    const model = strOrNull(o.device_model);
    const productType = strOrNull(o.product_type);
    // Only a format with a vendor resolver (export.xml) tells the manufacturer; device-a's keys stay as they were.
    const maker = this.vendorOf ? strOrNull(o.device_manufacturer) : null;
    const l = this.last;
    if (l && l.source_bundle_id === bundle && l.source_name === name && l.device_model === model && l.product_type === productType && l.maker === maker) return l;
    let key = `${bundle ?? ''}\u0000${name ?? ''}\u0000${model ?? ''}\u0000${productType ?? ''}`;
    if (maker !== null) key += `\u0000${maker}`;
    const p = this.provs.get(key, () => {
      let source = vendorOf(bundle, this.provider);
      if (source === this.provider && this.vendorOf) source = this.vendorOf(o) ?? source;
      return {
        key,
        provider: this.provider,
        source,
        device: deviceLabel(model, productType),
        body_worn: isBodyWorn(healthKitDeviceKind(productType, model, source)),
        source_name: name,
        source_bundle_id: bundle,
        device_model: model,
        product_type: productType,
        maker,
      };
    });
    this.last = p;
    return p;
  }

  /**
   * A value of catalog type `qt` in its storage unit, through UCUM (units.ts: the cached
   * storageUnitConverter gives toStorageUnit's results). Converters are looked up per type, then
   * per unit, so a line costs two small map lookups and no string building.
   */
  convert(qt: QuantityType, value: number, unit: string): number {
    if (unit === qt.unit) return value;
    let units = this.converters.get(qt);
    if (!units) this.converters.set(qt, (units = boundedCache({ max: 64 })));
    const fn = units.get(unit, () => storageUnitConverter(qt.type, unit));
    if (fn === null) fail(`cannot convert unit "${unit}" to ${qt.unit} (${qt.type})`);
    const v = fn(value);
    if (!Number.isFinite(v)) fail(`value ${value} ${unit} does not convert to a finite ${qt.unit}`);
    return v;
  }
}

// ---------------------------------------------------------------------------------------------
// Common line fields
// ---------------------------------------------------------------------------------------------

function uuidOf(o: Obj): string {
  const u = o.uuid;
  if (typeof u !== 'string' || u === '') fail('missing uuid');
  return u;
}

type Times = { start: number; end: number; start_date: string; end_date: string };

function timesOf(o: Obj): Times {
  const start = parseHealthKitDate(o.start_date);
  if (Number.isNaN(start)) fail(o.start_date === undefined ? 'missing start_date' : 'start_date is not a date-time with a time zone');
  // Instantaneous samples (heart rate, weight) repeat the start: one parse does for both.
  const end = o.end_date === o.start_date ? start : parseHealthKitDate(o.end_date);
  if (Number.isNaN(end)) fail(o.end_date === undefined ? 'missing end_date' : 'end_date is not a date-time with a time zone');
  if (end < start) fail('end_date is before start_date');
  const start_date = isoOf(o.start_date as string, start);
  return { start, end, start_date, end_date: end === start ? start_date : isoOf(o.end_date as string, end) };
}

/**
 * The line's HealthKit metadata (provider fields as sent) plus `timezone` (HKTimeZone, else null).
 * The object is the one JSON.parse just made for this line, so it is extended in place.
 */
function metadataOf(o: Obj): Metadata {
  const m = isObj(o.metadata) ? o.metadata : {};
  m.timezone = typeof m.HKTimeZone === 'string' && m.HKTimeZone !== '' ? m.HKTimeZone : null;
  return m;
}

function wasUserEntered(o: Obj, md: Metadata): boolean {
  return o.was_user_entered === true || md.HKWasUserEntered === true || md.HKWasUserEntered === 1;
}

/** An HKQuantity as sent: `{value, unit}`, or a number with `<name>_unit` beside it (Apple's export form). */
function quantityField(o: Obj, name: string, defaultUnit: string | null): { value: number; unit: string } | null {
  const raw = o[name];
  if (raw === undefined || raw === null) return null;
  let value: unknown;
  let unit: unknown;
  if (isObj(raw)) {
    value = raw.value;
    unit = raw.unit ?? defaultUnit;
  } else {
    value = raw;
    unit = o[`${name}_unit`] ?? defaultUnit;
  }
  if (!finite(value)) fail(`${name} is not a finite number`);
  if (typeof unit !== 'string' || unit === '') fail(`${name} has no unit`);
  return { value, unit };
}

/** A value of a catalog type from a quantity field, converted to the type's storage unit. */
function catalogValue(up: Upload, o: Obj, name: string, type: string, defaultUnit: string | null): number | null {
  const q = quantityField(o, name, defaultUnit);
  if (!q) return null;
  return up.convert(findQuantityType(type)!, q.value, q.unit);
}

/** A value converted through UCUM to a unit that is not a catalog type's (seconds, hertz, microvolts). */
function ucumValue(value: number, unit: string, toUcum: string, what: string): number {
  const fn = converter(ucumOf(unit), toUcum);
  if (!fn) fail(`cannot convert ${what} unit "${unit}" to ${toUcum}`);
  return fn(value);
}

// ---------------------------------------------------------------------------------------------
// Line kinds
// ---------------------------------------------------------------------------------------------

function quantityLine(up: Upload, o: Obj): QuantityRecord {
  const uuid = uuidOf(o);
  const id = o.type;
  if (typeof id !== 'string' || id === '') fail('missing type');
  const qt = quantityTypeForHealthKit(id);
  if (!qt) fail(`unknown quantity type ${id}`);
  const value = o.value;
  if (!finite(value)) fail('value is not a finite number');
  const unit = o.unit;
  if (typeof unit !== 'string' || unit === '') fail('missing unit');
  // HealthKit's percent unit holds fractions (HKUnit.percent(): 0.97 means 97 %), while the
  // storage unit '%' is UCUM's (97 %), as every other provider sends it: a HealthKit '%' value is
  // a fraction, UCUM '1', converted like any other unit.
  const converted = up.convert(qt, value, unit === '%' ? '1' : unit);
  const t = timesOf(o);
  const p = up.prov(o);
  const md = metadataOf(o);
  md.original_value = value;
  md.original_unit = unit;
  return {
    kind: 'quantity',
    external_id: uuid,
    type: qt.type,
    value: converted,
    unit: qt.unit,
    start_date: t.start_date,
    end_date: t.end_date,
    source_name: p.source_name,
    source_bundle_id: p.source_bundle_id,
    device_model: p.device_model,
    product_type: p.product_type,
    was_user_entered: wasUserEntered(o, md),
    metadata: md,
    provider: p.provider,
    source: p.source,
    device: p.device,
    body_worn: p.body_worn,
  };
}

function categoryLine(up: Upload, o: Obj): CategoryRecord {
  const uuid = uuidOf(o);
  const id = o.type;
  if (typeof id !== 'string' || id === '') fail('missing type');
  const ct = categoryTypeOf(id);
  if (!ct) fail(`unknown category type ${id}`);
  const value = categoryValueOf(ct, o.value);
  if (value === null) fail(`unknown value ${JSON.stringify(o.value ?? null)} for ${id}`);
  const t = timesOf(o);
  const p = up.prov(o);
  const md = metadataOf(o);
  md.original_value = o.value;
  if (ct.type === 'sleep_analysis') {
    if (!up.sleepUuids.has(uuid)) {
      up.sleepUuids.add(uuid);
      up.sleep.push({ prov: p, s: t.start, e: t.end, uuid, value, tz: md.timezone as string | null });
    }
  } else if (ct.type === 'menstrual_flow' && value !== 'none') {
    up.flow.push({ prov: p, date: localDate(t.start, md.timezone as string | null), value, uuid, tz: md.timezone as string | null });
  }
  return {
    kind: 'category',
    external_id: uuid,
    type: ct.type,
    value,
    start_date: t.start_date,
    end_date: t.end_date,
    source_name: p.source_name,
    source_bundle_id: p.source_bundle_id,
    device_model: p.device_model,
    product_type: p.product_type,
    was_user_entered: wasUserEntered(o, md),
    metadata: md,
    provider: p.provider,
    source: p.source,
    device: p.device,
    body_worn: p.body_worn,
  };
}

type Statistic = { average?: number; minimum?: number; maximum?: number; sum?: number; unit: string };

/** HKWorkout `statistics` (allStatistics): identifier → {average, minimum, maximum, sum, unit}. */
function statisticOf(o: Obj, identifier: string): Statistic | null {
  const all = o.statistics;
  if (all === undefined || all === null) return null;
  if (!isObj(all)) fail('statistics is not an object');
  const s = all[identifier];
  if (s === undefined || s === null) return null;
  if (!isObj(s) || typeof s.unit !== 'string' || s.unit === '') fail(`statistics.${identifier} needs a unit`);
  for (const k of ['average', 'minimum', 'maximum', 'sum'] as const) {
    if (s[k] !== undefined && s[k] !== null && !finite(s[k])) fail(`statistics.${identifier}.${k} is not a finite number`);
  }
  return s as Statistic;
}

function statValue(up: Upload, o: Obj, identifier: string, field: 'average' | 'maximum' | 'sum', type: string): number | null {
  const s = statisticOf(o, identifier);
  const v = s?.[field];
  if (!s || !finite(v)) return null;
  return up.convert(findQuantityType(type)!, v, s.unit);
}

function optionalNumber(v: unknown, invalidBelowZero: boolean): number | null {
  if (!finite(v)) return null;
  // CLLocation marks an unknown speed, course or accuracy with a negative value.
  return invalidBelowZero && v < 0 ? null : v;
}

function routeOf(o: Obj, md: Metadata): RoutePoint[] {
  const raw = o.route;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) fail('route is not an array');
  const route: RoutePoint[] = [];
  let dropped = 0;
  for (const pt of raw as unknown[]) {
    if (!isObj(pt)) {
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

function workoutLine(up: Upload, o: Obj): WorkoutRecord {
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
    provider: p.provider,
    source: p.source,
    device: p.device,
    body_worn: p.body_worn,
  };
}

function ecgLine(up: Upload, o: Obj): EcgRecord {
  const uuid = uuidOf(o);
  const t = timesOf(o);
  const raw = o.voltages;
  if (!Array.isArray(raw)) fail('voltages is not an array');
  const unit = o.voltage_unit ?? 'mcV';
  if (typeof unit !== 'string' || unit === '') fail('voltage_unit is not a unit');
  const voltages = new Array<number>(raw.length);
  let factor = 1;
  if (unit !== 'mcV') {
    const fn = converter(ucumOf(unit), 'uV');
    if (!fn) fail(`cannot convert voltage unit "${unit}" to mcV`);
    factor = fn(1);
  }
  for (let i = 0; i < raw.length; i++) {
    const v: unknown = raw[i];
    if (!finite(v)) fail(`voltages[${i}] is not a finite number`);
    voltages[i] = factor === 1 ? v : Number((v * factor).toPrecision(12));
  }
  let classification: string | null = null;
  let classificationValue: number | null = finite(o.classification_value) ? o.classification_value : null;
  if (typeof o.classification === 'string' && o.classification !== '') {
    // Passed through unchecked (spec "ECG recording"): the watch's own label.
    classification = o.classification;
    classificationValue ??= ECG_CLASSIFICATION_VALUES[classification] ?? null;
  } else if (finite(o.classification)) {
    classificationValue ??= o.classification;
    classification = Object.keys(ECG_CLASSIFICATION_VALUES).find((k) => ECG_CLASSIFICATION_VALUES[k] === o.classification) ?? null;
  }
  const p = up.prov(o);
  const md = metadataOf(o);
  const hz = quantityField(o, 'sampling_frequency', 'Hz');
  return {
    kind: 'ecg',
    external_id: uuid,
    start_date: t.start_date,
    end_date: t.end_date,
    classification,
    classification_value: classificationValue,
    symptoms_status: strOrNull(o.symptoms_status),
    average_heart_rate: catalogValue(up, o, 'average_heart_rate', 'heart_rate', 'count/min'),
    sampling_frequency_hz: hz ? (hz.unit === 'Hz' ? hz.value : ucumValue(hz.value, hz.unit, 'Hz', 'sampling_frequency')) : null,
    number_of_measurements: voltages.length,
    voltages,
    metadata: md,
    provider: p.provider,
    source: p.source,
    device: p.device,
    body_worn: p.body_worn,
  };
}

function heartbeatLine(up: Upload, o: Obj): HeartbeatSeriesRecord {
  const uuid = uuidOf(o);
  const t = timesOf(o);
  const raw = o.beats;
  if (!Array.isArray(raw)) fail('beats is not an array');
  const beats = new Array<{ offset_s: number; preceded_by_gap: boolean }>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const b: unknown = raw[i];
    if (!isObj(b) || !finite(b.time_since_series_start) || b.time_since_series_start < 0) {
      fail(`beats[${i}].time_since_series_start is not a number ≥ 0`);
    }
    beats[i] = { offset_s: b.time_since_series_start, preceded_by_gap: b.preceded_by_gap === true };
  }
  const p = up.prov(o);
  return {
    kind: 'heartbeat_series',
    external_id: uuid,
    start_date: t.start_date,
    end_date: t.end_date,
    beats,
    metadata: metadataOf(o),
    provider: p.provider,
    source: p.source,
    device: p.device,
    body_worn: p.body_worn,
  };
}

type Member = { obj: Obj; id: string; value: number; unit: string };

function membersOf(o: Obj): Member[] {
  const raw = o.objects;
  if (!Array.isArray(raw) || raw.length === 0) fail('correlation has no objects');
  return (raw as unknown[]).map((m, i) => {
    if (!isObj(m)) fail(`objects[${i}] is not an object`);
    if (typeof m.type !== 'string') fail(`objects[${i}] has no type`);
    if (!finite(m.value)) fail(`objects[${i}].value is not a finite number`);
    if (typeof m.unit !== 'string' || m.unit === '') fail(`objects[${i}] has no unit`);
    return { obj: m, id: m.type, value: m.value, unit: m.unit };
  });
}

function bloodPressureLines(up: Upload, o: Obj, uuid: string, t: Times, p: Prov, md: Metadata): ParseItem[] {
  const members = membersOf(o);
  const sys = members.filter((m) => m.id === 'HKQuantityTypeIdentifierBloodPressureSystolic');
  const dia = members.filter((m) => m.id === 'HKQuantityTypeIdentifierBloodPressureDiastolic');
  if (sys.length !== 1 || dia.length !== 1) fail('blood pressure correlation needs exactly one systolic and one diastolic object');
  const parts = [
    { m: sys[0]!, qt: findQuantityType('blood_pressure_systolic')!, code: 'systolic', role: 'systolic' },
    { m: dia[0]!, qt: findQuantityType('blood_pressure_diastolic')!, code: 'diastolic', role: 'diastolic' },
  ];
  const samples: QuantityRecord[] = parts.map(({ m, qt, role }) => {
    const value = up.convert(qt, m.value, m.unit);
    const mt = m.obj.start_date === undefined && m.obj.end_date === undefined ? t : timesOf(m.obj);
    const mmd = isObj(m.obj.metadata) ? m.obj.metadata : {};
    mmd.timezone = typeof mmd.HKTimeZone === 'string' ? mmd.HKTimeZone : md.timezone;
    mmd.original_value = m.value;
    mmd.original_unit = m.unit;
    mmd.correlation_id = uuid;
    return {
      kind: 'quantity',
      external_id: typeof m.obj.uuid === 'string' && m.obj.uuid !== '' ? m.obj.uuid : `${uuid}:${role}`,
      type: qt.type,
      value,
      unit: qt.unit,
      start_date: mt.start_date,
      end_date: mt.end_date,
      source_name: p.source_name,
      source_bundle_id: p.source_bundle_id,
      device_model: p.device_model,
      product_type: p.product_type,
      was_user_entered: wasUserEntered(o, md),
      metadata: mmd,
      provider: p.provider,
      source: p.source,
      device: p.device,
      body_worn: p.body_worn,
    };
  });
  const observation: ObservationRecord = {
    kind: 'observation',
    external_id: uuid,
    code: 'blood_pressure',
    loinc_code: '85354-9',
    start_date: t.start_date,
    end_date: t.end_date,
    components: parts.map(({ qt, code }, i) => ({ code, loinc_code: qt.loinc_code, value: samples[i]!.value, unit: qt.unit })),
    metadata: md,
    provider: p.provider,
    source: p.source,
    device: p.device,
    body_worn: p.body_worn,
  };
  return [{ record: observation }, ...samples.map((record) => ({ record }))];
}

function foodLine(up: Upload, o: Obj, uuid: string, t: Times, p: Prov, md: Metadata): NutritionRecord {
  const rec: NutritionRecord = {
    kind: 'nutrition',
    external_id: uuid,
    start_date: t.start_date,
    end_date: t.end_date,
    name: strOrNull(md.HKFoodType),
    meal_type: strOrNull(o.meal_type),
    energy_kcal: null,
    protein_g: null,
    carbohydrates_g: null,
    fat_g: null,
    fiber_g: null,
    sugar_g: null,
    sodium_mg: null,
    water_ml: null,
    nutrients: {},
    metadata: md,
    provider: p.provider,
    source: p.source,
    device: p.device,
    body_worn: p.body_worn,
  };
  for (const m of membersOf(o)) {
    if (!m.id.startsWith(DIETARY_PREFIX)) fail(`food correlation object ${m.id} is not a dietary quantity`);
    const field = NUTRITION_FIELDS[m.id];
    const qt = quantityTypeForHealthKit(m.id);
    if (field) {
      rec[field] = (rec[field] ?? 0) + up.convert(qt!, m.value, m.unit);
      continue;
    }
    const name = snake(m.id.slice(DIETARY_PREFIX.length));
    let value = m.value;
    let unit = m.unit;
    if (qt) {
      value = up.convert(qt, m.value, m.unit);
      unit = qt.unit;
    } else if (!NUTRIENT_UNITS.includes(unit)) {
      // Not a catalog type: brought to g, kcal or mL when UCUM knows the unit's dimension.
      for (const target of NUTRIENT_TARGETS) {
        const fn = converter(ucumOf(unit), ucumOf(target));
        if (fn) {
          value = Number(fn(value).toPrecision(12));
          unit = target;
          break;
        }
      }
    }
    const prev = rec.nutrients[name];
    rec.nutrients[name] = prev && prev.unit === unit ? { value: prev.value + value, unit } : { value, unit };
  }
  return rec;
}

function correlationLine(up: Upload, o: Obj): ParseItem | ParseItem[] {
  const uuid = uuidOf(o);
  const t = timesOf(o);
  const p = up.prov(o);
  const md = metadataOf(o);
  switch (o.type) {
    case 'HKCorrelationTypeIdentifierBloodPressure':
      return bloodPressureLines(up, o, uuid, t, p, md);
    case 'HKCorrelationTypeIdentifierFood':
      return { record: foodLine(up, o, uuid, t, p, md) };
    default:
      return fail(typeof o.type === 'string' ? `unknown correlation type ${o.type}` : 'missing type');
  }
}

// ---------------------------------------------------------------------------------------------
// Records that need the whole upload: sleep sessions and menstrual cycles
// ---------------------------------------------------------------------------------------------

/**
 * Day formatters per canonical zone (src/shared/timeZones.ts): HKTimeZone is the uploader's string,
 * so every spelling of a zone shares one formatter and the cache is bounded anyway.
 */
const dayFormats = boundedMemo((zone) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }));

/** YYYY-MM-DD of an instant in the sample's time zone (UTC when none or unknown). */
function localDate(ms: number, tz: string | null): string {
  const zone = tz ? canonicalTimeZone(tz) : null;
  if (zone) {
    const parts = dayFormats(zone).formatToParts(ms);
    const get = (type: string) => parts.find((x) => x.type === type)?.value ?? '';
    return `${get('year')}-${get('month')}-${get('day')}`;
  }
  return new Date(ms).toISOString().slice(0, 10);
}

function groupBy<T extends { prov: Prov }>(items: T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const it of items) {
    const g = groups.get(it.prov.key);
    if (g) g.push(it);
    else groups.set(it.prov.key, [it]);
  }
  return [...groups.values()];
}

/** One night: consecutive samples of one source less than 2 h apart (contracts.md §3). */
function sleepSessions(members: SleepMember[]): SleepSessionRecord[] {
  const out: SleepSessionRecord[] = [];
  for (const group of groupBy(members)) {
    group.sort((a, b) => a.s - b.s || a.e - b.e || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
    let night: SleepMember[] = [];
    let lastEnd = -Infinity;
    for (const m of group) {
      if (night.length && m.s - lastEnd >= SLEEP_GAP_MS) {
        out.push(sleepSession(night));
        night = [];
        lastEnd = -Infinity;
      }
      night.push(m);
      lastEnd = Math.max(lastEnd, m.e);
    }
    if (night.length) out.push(sleepSession(night));
  }
  return out.sort((a, b) => (a.bedtime_start < b.bedtime_start ? -1 : a.bedtime_start > b.bedtime_start ? 1 : 0));
}

function sleepSession(night: SleepMember[]): SleepSessionRecord {
  const ms: Record<SleepPhase['phase'], number> = { deep: 0, rem: 0, light: 0, awake: 0, asleep: 0, in_bed: 0 };
  const phases: SleepPhase[] = [];
  let end = -Infinity;
  for (const m of night) {
    const phase = SLEEP_PHASES[m.value]!;
    ms[phase] += m.e - m.s;
    end = Math.max(end, m.e);
    phases.push({ phase, start_date: new Date(m.s).toISOString(), end_date: new Date(m.e).toISOString() });
  }
  const sec = (x: number) => Math.round(x / 1000);
  const first = night[0]!;
  const p = first.prov;
  return {
    kind: 'sleep_session',
    external_id: `sleep:${sha32(night.map((m) => m.uuid).sort().join('\n'))}`,
    bedtime_start: new Date(first.s).toISOString(),
    bedtime_end: new Date(end).toISOString(),
    // Sums of the samples' durations per phase; total sleep is every asleep phase (not awake, not in bed).
    total_sleep_seconds: sec(ms.deep + ms.rem + ms.light + ms.asleep),
    deep_sleep_seconds: sec(ms.deep),
    rem_sleep_seconds: sec(ms.rem),
    light_sleep_seconds: sec(ms.light),
    awake_seconds: sec(ms.awake),
    sleep_score: null,
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: null,
    spo2_avg: null,
    phases,
    metadata: {
      timezone: first.tz,
      in_bed_seconds: sec(ms.in_bed),
      asleep_unspecified_seconds: sec(ms.asleep),
      sample_count: night.length,
      source_name: p.source_name,
      source_bundle_id: p.source_bundle_id,
    },
    provider: p.provider,
    source: p.source,
    device: p.device,
    body_worn: p.body_worn,
  };
}

const dayNumber = (date: string) => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / DAY_MS;

/**
 * Menstrual cycles: a cycle starts on a flow day after at least 2 days without flow; its period
 * runs to the last flow day before such a gap; its length is the days to the next cycle's start.
 * Flow "none" is not a flow day. Several samples on one day keep the heaviest flow.
 */
function menstrualCycles(members: FlowMember[]): MenstrualCycleRecord[] {
  const out: MenstrualCycleRecord[] = [];
  for (const group of groupBy(members)) {
    const days = new Map<string, FlowMember>();
    for (const m of group) {
      const prev = days.get(m.date);
      if (!prev || FLOW_RANK[m.value]! > FLOW_RANK[prev.value]!) days.set(m.date, m);
    }
    const dates = [...days.keys()].sort();
    const cycles: { start: string; end: string; flow: Record<string, string>; first: FlowMember }[] = [];
    let prevDay = -Infinity;
    for (const date of dates) {
      const n = dayNumber(date);
      const m = days.get(date)!;
      const cur = cycles[cycles.length - 1];
      if (!cur || n - prevDay >= 3) cycles.push({ start: date, end: date, flow: { [date]: m.value }, first: m });
      else {
        cur.end = date;
        cur.flow[date] = m.value;
      }
      prevDay = n;
    }
    cycles.forEach((c, i) => {
      const next = cycles[i + 1];
      const p = c.first.prov;
      out.push({
        kind: 'menstrual_cycle',
        external_id: `cycle:${sha32(`${p.key}\n${c.start}`)}`,
        start_date: c.start,
        period_end_date: c.end,
        period_length_days: dayNumber(c.end) - dayNumber(c.start) + 1,
        cycle_length_days: next ? dayNumber(next.start) - dayNumber(c.start) : null,
        flow: c.flow,
        metadata: { timezone: c.first.tz, source_name: p.source_name, source_bundle_id: p.source_bundle_id },
        provider: p.provider,
        source: p.source,
        device: p.device,
        body_worn: p.body_worn,
      });
    });
  }
  return out.sort((a, b) => (a.start_date < b.start_date ? -1 : a.start_date > b.start_date ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Lines and the stream
// ---------------------------------------------------------------------------------------------

function rejected(lineNo: number, reason: string, line: string): ParseItem {
  return { rejected: { location: `line ${lineNo}`, reason, excerpt: excerptOf(line) } };
}

function parseLine(up: Upload, raw: string, lineNo: number): ParseItem | ParseItem[] | undefined {
  let line = raw;
  if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
  if (lineNo === 1 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
  if (line.length === 0) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    if (line.trim() === '') return undefined;
    return rejected(lineNo, 'line is not valid JSON', line);
  }
  if (!isObj(o)) return rejected(lineNo, 'line is not a JSON object', line);
  try {
    return healthKitObjectItems(up, o);
  } catch (err) {
    if (err instanceof LineError) return rejected(lineNo, err.message, line);
    throw err;
  }
}

/**
 * The record(s) of one HealthKit object in the line shape above; throws LineError (the reason) for
 * an object that cannot be stored. Sleep and flow samples are also remembered in `up`.
 */
export function healthKitObjectItems(up: Upload, o: Obj): ParseItem | ParseItem[] {
  switch (o.kind) {
    case 'quantity':
      return { record: quantityLine(up, o) };
    case 'category':
      return { record: categoryLine(up, o) };
    case 'workout':
      return { record: workoutLine(up, o) };
    case 'ecg':
      return { record: ecgLine(up, o) };
    case 'heartbeat_series':
      return { record: heartbeatLine(up, o) };
    case 'correlation':
      return correlationLine(up, o);
    case undefined:
      return fail('missing kind');
    default:
      return fail(`unknown kind ${JSON.stringify(o.kind)}`);
  }
}

/** The records that need the whole upload, after its last object: sleep sessions, then menstrual cycles. */
export function* wholeUploadRecords(up: Upload): Generator<SleepSessionRecord | MenstrualCycleRecord> {
  yield* sleepSessions(up.sleep);
  yield* menstrualCycles(up.flow);
}

async function* parseHealthKit(payload: Buffer, provider: string): AsyncGenerator<ParseItem> {
  const up = new Upload(provider);
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  const decoder = new StringDecoder('utf8');
  let parts: string[] = [];
  let partsLen = 0;
  /** Set while skipping the rest of a line longer than MAX_LINE_CHARS (parts then hold its excerpt). */
  let oversized = false;
  let lineNo = 0;

  function takeLine(last: string): { line: string; tooLong: boolean } {
    const tooLong = oversized;
    const line = parts.length === 0 ? last : tooLong ? parts.join('') : (parts.push(last), parts.join(''));
    parts = [];
    partsLen = 0;
    oversized = false;
    return { line, tooLong };
  }
  const tooLongItem = (line: string) => rejected(lineNo, `line is longer than ${MAX_LINE_CHARS} characters`, line);

  gunzip.end(payload);
  const chunks = gunzip[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (err) {
        // Not gzip, or cut short: what came before is kept; the broken rest is one rejected item.
        const message = err instanceof Error ? err.message : String(err);
        const { line } = takeLine(decoder.end());
        lineNo++;
        yield { rejected: { location: `line ${lineNo}`, reason: `payload is not a complete gzip stream (${message})`, excerpt: excerptOf(line) } };
        break;
      }
      if (next.done) {
        const { line, tooLong } = takeLine(decoder.end());
        if (line.length > 0 || tooLong) {
          lineNo++;
          const out = tooLong ? tooLongItem(line) : parseLine(up, line, lineNo);
          if (Array.isArray(out)) for (const item of out) yield item;
          else if (out !== undefined) yield out;
        }
        break;
      }
      const text = decoder.write(next.value);
      let pos = 0;
      let nl = text.indexOf('\n');
      while (nl !== -1) {
        const { line, tooLong } = takeLine(text.slice(pos, nl));
        lineNo++;
        // Inline rather than a helper generator: this loop runs once per line.
        const out = tooLong ? tooLongItem(line) : parseLine(up, line, lineNo);
        if (Array.isArray(out)) for (const item of out) yield item;
        else if (out !== undefined) yield out;
        pos = nl + 1;
        nl = text.indexOf('\n', pos);
      }
      if (pos < text.length && !oversized) {
        parts.push(pos === 0 ? text : text.slice(pos));
        partsLen += text.length - pos;
        if (partsLen > MAX_LINE_CHARS) {
          parts = [excerptOf(parts.join(''))];
          oversized = true;
        }
      }
    }
  } finally {
    gunzip.destroy();
  }

  for (const record of wholeUploadRecords(up)) yield { record };
}

export const healthKitParser: DeviceParser = {
  slug: 'device-a',
  parse(payload: Buffer, ctx) {
    return parseHealthKit(payload, ctx.provider);
  },
};
