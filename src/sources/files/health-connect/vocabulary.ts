import { exerciseActivity } from '../device-b/vocabulary.js';

/**
 * Health Connect's own database (the platform module's storage, not the Jetpack client): the
 * record tables this decoder reads and the platform constants stored in them. The mapping and
 * where each fact comes from are in docs/formats/health-connect.md.
 */

/** A table of one value per record: its value column, the unit the platform stores it in, and the catalog type. */
export type ScalarTable = {
  table: string;
  shape: 'instant' | 'interval';
  column: string;
  type: string;
  /** UCUM unit of the stored value (the platform's *RecordInternal classes). */
  ucum: string;
  /** Negative values are unreadable (counts, masses, energies); temperatures may be anything finite. */
  nonNegative: boolean;
  /** Whether the value feeds the summary of workouts of the same app (device-b's rule). */
  summary?: 'steps' | 'distance' | 'energy';
};

const s = (table: string, shape: ScalarTable['shape'], column: string, type: string, ucum: string, extra: Partial<ScalarTable> = {}): ScalarTable => ({
  table,
  shape,
  column,
  type,
  ucum,
  nonNegative: true,
  ...extra,
});

/** In the order they are read (a fixed order: the same file always gives the same sequence). */
export const SCALAR_TABLES: readonly ScalarTable[] = [
  s('steps_record_table', 'interval', 'count', 'step_count', '1', { summary: 'steps' }),
  s('distance_record_table', 'interval', 'distance', 'distance', 'm', { summary: 'distance' }),
  s('active_calories_burned_record_table', 'interval', 'energy', 'active_energy_burned', 'cal', { summary: 'energy' }),
  s('total_calories_burned_record_table', 'interval', 'energy', 'total_energy_burned', 'cal'),
  s('floors_climbed_record_table', 'interval', 'floors', 'flights_climbed', '1'),
  s('hydration_record_table', 'interval', 'volume', 'dietary_water', 'L'),
  s('weight_record_table', 'instant', 'weight', 'body_mass', 'g'),
  s('height_record_table', 'instant', 'height', 'height', 'm'),
  s('body_fat_record_table', 'instant', 'percentage', 'body_fat_percentage', '%'),
  s('lean_body_mass_record_table', 'instant', 'mass', 'lean_body_mass', 'g'),
  s('basal_metabolic_rate_record_table', 'instant', 'basal_metabolic_rate', 'basal_metabolic_rate', 'W'),
  s('oxygen_saturation_record_table', 'instant', 'percentage', 'oxygen_saturation', '%'),
  s('resting_heart_rate_record_table', 'instant', 'beats_per_minute', 'resting_heart_rate', '/min'),
  s('heart_rate_variability_rmssd_record_table', 'instant', 'heart_rate_variability_millis', 'hrv_rmssd', 'ms'),
  s('respiratory_rate_record_table', 'instant', 'rate', 'respiratory_rate', '/min'),
  s('vo2_max_record_table', 'instant', 'vo2_milliliters_per_minute_kilogram', 'vo2_max', 'mL/(kg.min)'),
  s('blood_glucose_record_table', 'instant', 'level', 'blood_glucose', 'mmol/L'),
  s('body_temperature_record_table', 'instant', 'temperature', 'body_temperature', 'Cel', { nonNegative: false }),
  s('basal_body_temperature_record_table', 'instant', 'temperature', 'basal_body_temperature', 'Cel', { nonNegative: false }),
];

/**
 * The platform's ExerciseSessionType constants (android.health.connect.datatypes), which the
 * database stores. They are NOT the Jetpack client's EXERCISE_TYPE_* ints (device-b), only the
 * names agree, so the name goes through device-b's name → activity table.
 */
const PLATFORM_EXERCISE_TYPES: readonly string[] = [
  'UNKNOWN', // 0
  'BADMINTON',
  'BASEBALL',
  'BASKETBALL',
  'BIKING',
  'BIKING_STATIONARY',
  'BOOT_CAMP',
  'BOXING',
  'CALISTHENICS',
  'CRICKET',
  'DANCING', // 10
  'EXERCISE_CLASS',
  'FENCING',
  'FOOTBALL_AMERICAN',
  'FOOTBALL_AUSTRALIAN',
  'FRISBEE_DISC',
  'GOLF',
  'GUIDED_BREATHING',
  'GYMNASTICS',
  'HANDBALL',
  'HIGH_INTENSITY_INTERVAL_TRAINING', // 20
  'HIKING',
  'ICE_HOCKEY',
  'ICE_SKATING',
  'MARTIAL_ARTS',
  'PADDLING',
  'PARAGLIDING',
  'PILATES',
  'RACQUETBALL',
  'ROCK_CLIMBING',
  'ROLLER_HOCKEY', // 30
  'ROWING',
  'RUGBY',
  'RUNNING',
  'RUNNING_TREADMILL',
  'SAILING',
  'SCUBA_DIVING',
  'SKATING',
  'SKIING',
  'SNOWBOARDING',
  'SNOWSHOEING', // 40
  'SOCCER',
  'SOFTBALL',
  'SQUASH',
  'STAIR_CLIMBING',
  'STRENGTH_TRAINING',
  'STRETCHING',
  'SURFING',
  'SWIMMING_OPEN_WATER',
  'SWIMMING_POOL',
  'TABLE_TENNIS', // 50
  'TENNIS',
  'VOLLEYBALL',
  'WALKING',
  'WATER_POLO',
  'WEIGHTLIFTING',
  'WHEELCHAIR',
  'YOGA',
  'OTHER_WORKOUT',
  'STAIR_CLIMBING_MACHINE',
  'ELLIPTICAL', // 60
  'ROWING_MACHINE',
];

/** exercise_type → canonical activity and the platform's name; an unknown int is `other`, as Health Connect itself treats it. */
export function platformExercise(code: unknown): { activity: string; name: string | null; code: number | null } {
  const n = typeof code === 'number' && Number.isInteger(code) ? code : null;
  const name = n !== null ? PLATFORM_EXERCISE_TYPES[n] : undefined;
  if (!name || name === 'UNKNOWN') return { activity: 'other', name: name ? 'EXERCISE_SESSION_TYPE_UNKNOWN' : null, code: n };
  return { activity: exerciseActivity(name).activity, name: `EXERCISE_SESSION_TYPE_${name}`, code: n };
}

/** Exported for the docs' table and tests. */
export const PLATFORM_EXERCISE_NAMES = PLATFORM_EXERCISE_TYPES;
