import type { SleepPhase } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import type { UnitClass } from './unitMapping.js';

/**
 * Health Connect's vocabulary: the int constants of its record classes (sleep stages, exercise
 * types, menstrual flow, meal types, recording method), each also accepted by its name, and the
 * nutrient properties of NutritionRecord, as docs/formats/device-b.md lists them.
 */

// ---------------------------------------------------------------------------------------------
// Enumerations: Health Connect int constants, also accepted by name (with or without prefix).

/** Normalises an enum name: "STAGE_TYPE_DEEP", "deep", "Deep" → "DEEP" once the prefix is removed. */
export function enumName(v: string, prefix: string): string {
  const n = v.trim().toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  return n.startsWith(prefix) ? n.slice(prefix.length) : n;
}

export function readEnum<T>(v: unknown, field: string, prefix: string, byInt: ReadonlyMap<number, T>, byName: ReadonlyMap<string, T>): T {
  if (typeof v === 'number' && Number.isInteger(v)) {
    const r = byInt.get(v);
    if (r !== undefined) return r;
  } else if (typeof v === 'string') {
    const r = byName.get(enumName(v, prefix));
    if (r !== undefined) return r;
  }
  throw new RecordError(`${field} ${JSON.stringify(v)} is not a known value`);
}

export type StageKind = 'unknown' | 'awake' | 'sleeping' | 'out_of_bed' | 'light' | 'deep' | 'rem' | 'awake_in_bed';

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
export type Stage = { kind: StageKind; phase: SleepPhase['phase'] };
export const STAGE_BY_INT = new Map<number, Stage>(STAGES.map(([i, , kind, phase]) => [i, { kind, phase }]));
export const STAGE_BY_NAME = new Map<string, Stage>(STAGES.map(([, n, kind, phase]) => [n, { kind, phase }]));

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

export function exerciseActivity(v: unknown): { activity: string; name: string | null } {
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
export const FLOW_BY_INT = new Map(FLOWS.map(([i, , l]) => [i, l]));
export const FLOW_BY_NAME = new Map(FLOWS.map(([, n, l]) => [n, l]));

/** MealType.MEAL_TYPE_*; unknown (0) is null. */
const MEALS: readonly (readonly [int: number, name: string, label: string | null])[] = [
  [0, 'UNKNOWN', null],
  [1, 'BREAKFAST', 'breakfast'],
  [2, 'LUNCH', 'lunch'],
  [3, 'DINNER', 'dinner'],
  [4, 'SNACK', 'snack'],
];
export const MEAL_BY_INT = new Map(MEALS.map(([i, , l]) => [i, l]));
export const MEAL_BY_NAME = new Map(MEALS.map(([, n, l]) => [n, l]));

/** Metadata.RECORDING_METHOD_MANUAL_ENTRY. */
export function isManualEntry(v: unknown): boolean {
  return v === 3 || (typeof v === 'string' && enumName(v, 'RECORDING_METHOD_') === 'MANUAL_ENTRY');
}

// ---------------------------------------------------------------------------------------------
// Nutrition: NutritionRecord properties. Named fields of NutritionRecord (records.ts) first.

export const NUTRITION_MAIN: Readonly<Record<string, { key: 'energy_kcal' | 'protein_g' | 'carbohydrates_g' | 'fat_g' | 'fiber_g' | 'sugar_g' | 'sodium_mg'; cls: UnitClass; ucum: string }>> = {
  energy: { key: 'energy_kcal', cls: 'energy', ucum: 'kcal' },
  protein: { key: 'protein_g', cls: 'mass', ucum: 'g' },
  totalCarbohydrate: { key: 'carbohydrates_g', cls: 'mass', ucum: 'g' },
  totalFat: { key: 'fat_g', cls: 'mass', ucum: 'g' },
  dietaryFiber: { key: 'fiber_g', cls: 'mass', ucum: 'g' },
  sugar: { key: 'sugar_g', cls: 'mass', ucum: 'g' },
  sodium: { key: 'sodium_mg', cls: 'mass', ucum: 'mg' },
};

/** Other nutrients: stored as `nutrients[snake_case]` in the unit their labels use. */
export const NUTRIENT_UNIT: Readonly<Record<string, 'g' | 'mg' | 'mcg' | 'kcal'>> = {
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
export const NUTRIENT_UCUM: Readonly<Record<string, string>> = { g: 'g', mg: 'mg', mcg: 'ug', kcal: 'kcal', mL: 'mL' };
export const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
