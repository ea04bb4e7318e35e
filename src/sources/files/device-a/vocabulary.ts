import type { SleepPhase } from '../../../../commands/ingestion/records.js';
import { boundedCache, boundedMemo, type BoundedCache } from '../../../shared/boundedCache.js';

/**
 * HealthKit's names and the service's: category types and their values, workout activity types,
 * workout statistics, ECG classifications, dietary quantities (docs/formats/device-a.md).
 */

/** PascalCase → snake_case, keeping acronyms together: AsleepREM → asleep_rem, VO2Max → vo2_max. */
export function snake(pascal: string): string {
  return pascal
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

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

export function categoryTypeOf(identifier: string): CategoryType | null {
  return categoryTypes(identifier);
}

/**
 * Canonical value of a category sample. Sleep analysis and menstrual flow have closed value sets
 * (grouping depends on them). Other types: `HKCategoryValue<Type><Name>` → snake of Name
 * (HKCategoryValueAppleStandHourStood → stood), `HKCategoryValueSeverityMild` → mild,
 * `HKCategoryValueNotApplicable` → not_applicable, a raw integer → its decimal string.
 */
export function categoryValueOf(t: CategoryType, raw: unknown): string | null {
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

export function activityOf(raw: unknown): string {
  return typeof raw === 'string' ? activities(raw) : 'other';
}

/** Distance statistics of HKWorkout, tried in order when `total_distance` is absent. */
export const DISTANCE_STATISTICS = [
  'HKQuantityTypeIdentifierDistanceWalkingRunning',
  'HKQuantityTypeIdentifierDistanceCycling',
  'HKQuantityTypeIdentifierDistanceSwimming',
  'HKQuantityTypeIdentifierDistanceWheelchair',
  'HKQuantityTypeIdentifierDistanceDownhillSnowSports',
];

/** HKElectrocardiogram.Classification raw values, for `classification_value` when not sent. */
export const ECG_CLASSIFICATION_VALUES: Readonly<Record<string, number>> = {
  notSet: 0,
  sinusRhythm: 1,
  atrialFibrillation: 2,
  inconclusiveLowHeartRate: 3,
  inconclusiveHighHeartRate: 4,
  inconclusivePoorReading: 5,
  inconclusiveOther: 6,
  unrecognized: 100,
};

export type NutritionField = 'energy_kcal' | 'protein_g' | 'carbohydrates_g' | 'fat_g' | 'fiber_g' | 'sugar_g' | 'sodium_mg' | 'water_ml';
export const NUTRITION_FIELDS: Readonly<Record<string, NutritionField>> = {
  HKQuantityTypeIdentifierDietaryEnergyConsumed: 'energy_kcal',
  HKQuantityTypeIdentifierDietaryProtein: 'protein_g',
  HKQuantityTypeIdentifierDietaryCarbohydrates: 'carbohydrates_g',
  HKQuantityTypeIdentifierDietaryFatTotal: 'fat_g',
  HKQuantityTypeIdentifierDietaryFiber: 'fiber_g',
  HKQuantityTypeIdentifierDietarySugar: 'sugar_g',
  HKQuantityTypeIdentifierDietarySodium: 'sodium_mg',
  HKQuantityTypeIdentifierDietaryWater: 'water_ml',
};
export const DIETARY_PREFIX = 'HKQuantityTypeIdentifierDietary';
/** Units other nutrients are brought to (records.ts NutritionRecord.nutrients), by dimension. */
export const NUTRIENT_UNITS = ['g', 'mg', 'mcg', 'kcal', 'mL'];
export const NUTRIENT_TARGETS = ['g', 'kcal', 'mL'];

/** Canonical sleep-analysis values and the phase each one is. */
export const SLEEP_PHASES: Readonly<Record<string, SleepPhase['phase']>> = {
  asleep_deep: 'deep',
  asleep_rem: 'rem',
  asleep_core: 'light',
  awake: 'awake',
  asleep_unspecified: 'asleep',
  in_bed: 'in_bed',
};
