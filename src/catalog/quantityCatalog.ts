/**
 * The quantity type catalog (contracts.md §4, spec "Resources": each entry has type, storage
 * unit, ucum_unit, loinc_code). Storage units are HealthKit unit strings; values of every
 * provider are converted to them on ingestion.
 *
 * `group` and `match` serve the merged view (spec "Merged view"): the group names the user's
 * priority group, `match` the rule by which two sources' records are the same measurement.
 */
export type MetricGroup = 'activity' | 'heart' | 'recovery' | 'body' | 'sleep' | 'workouts' | 'vitals' | 'nutrition' | 'other';
export type MatchKind = 'count' | 'reading' | 'nightly' | 'body' | 'other';

export type QuantityType = {
  type: string;
  unit: string;
  ucum_unit: string;
  loinc_code: string | null;
  group: MetricGroup;
  match: MatchKind;
  /**
   * The physiologically plausible range of one value, in the storage unit, both ends included
   * (contracts §15, docs/quality.md "Ranges"): a value outside it is stored, flagged
   * `implausible_value`, and left out of the merged view and statistics. Counted amounts (steps,
   * energy, distances, nutrients) bound one record, which may span up to 36 hours.
   */
  plausible: readonly [min: number, max: number];
  /** How values of one interval combine in statistics: counts add up, readings average. */
  aggregation: 'sum' | 'avg';
  /** HealthKit identifier, when HealthKit has one. */
  healthkit?: string;
};

const q = (t: QuantityType) => t;

export const QUANTITY_CATALOG: readonly QuantityType[] = [
  q({ type: 'heart_rate', unit: 'count/min', ucum_unit: '/min', loinc_code: '8867-4', group: 'heart', match: 'reading', plausible: [20, 250], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierHeartRate' }),
  q({ type: 'resting_heart_rate', unit: 'count/min', ucum_unit: '/min', loinc_code: '40443-4', group: 'heart', match: 'nightly', plausible: [20, 200], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierRestingHeartRate' }),
  q({ type: 'step_count', unit: 'count', ucum_unit: '{steps}', loinc_code: '55423-8', group: 'activity', match: 'count', plausible: [0, 150_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierStepCount' }),
  q({ type: 'active_energy_burned', unit: 'kcal', ucum_unit: 'kcal', loinc_code: '41981-2', group: 'activity', match: 'count', plausible: [0, 15_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierActiveEnergyBurned' }),
  q({ type: 'hrv_sdnn', unit: 'ms', ucum_unit: 'ms', loinc_code: '80404-7', group: 'recovery', match: 'nightly', plausible: [1, 500], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierHeartRateVariabilitySDNN' }),
  q({ type: 'hrv_rmssd', unit: 'ms', ucum_unit: 'ms', loinc_code: null, group: 'recovery', match: 'nightly', plausible: [1, 500], aggregation: 'avg' }),
  q({ type: 'oxygen_saturation', unit: '%', ucum_unit: '%', loinc_code: '59408-5', group: 'vitals', match: 'reading', plausible: [50, 100], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierOxygenSaturation' }),
  q({ type: 'respiratory_rate', unit: 'count/min', ucum_unit: '/min', loinc_code: '9279-1', group: 'vitals', match: 'reading', plausible: [3, 60], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierRespiratoryRate' }),
  q({ type: 'body_mass', unit: 'kg', ucum_unit: 'kg', loinc_code: '29463-7', group: 'body', match: 'body', plausible: [0.2, 650], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBodyMass' }),
  q({ type: 'body_fat_percentage', unit: '%', ucum_unit: '%', loinc_code: '41982-0', group: 'body', match: 'body', plausible: [2, 75], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBodyFatPercentage' }),
  q({ type: 'body_temperature', unit: 'degC', ucum_unit: 'Cel', loinc_code: '8310-5', group: 'body', match: 'body', plausible: [25, 45], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBodyTemperature' }),
  // More HealthKit quantity types (device-a, docs/formats/device-a.md). LOINC codes only where
  // one clearly denotes the measurement; null otherwise (no guessed codes).
  q({ type: 'walking_running_distance', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 300_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDistanceWalkingRunning' }),
  q({ type: 'cycling_distance', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 1_000_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDistanceCycling' }),
  q({ type: 'flights_climbed', unit: 'count', ucum_unit: '{flights}', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 5_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierFlightsClimbed' }),
  q({ type: 'basal_energy_burned', unit: 'kcal', ucum_unit: 'kcal', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 10_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierBasalEnergyBurned' }),
  q({ type: 'apple_exercise_time', unit: 'min', ucum_unit: 'min', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 2_160], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierAppleExerciseTime' }),
  q({ type: 'vo2_max', unit: 'mL/(kg*min)', ucum_unit: 'mL/(kg.min)', loinc_code: null, group: 'heart', match: 'nightly', plausible: [10, 100], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierVO2Max' }),
  q({ type: 'walking_heart_rate_average', unit: 'count/min', ucum_unit: '/min', loinc_code: null, group: 'heart', match: 'nightly', plausible: [30, 220], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierWalkingHeartRateAverage' }),
  q({ type: 'blood_glucose', unit: 'mg/dL', ucum_unit: 'mg/dL', loinc_code: '2339-0', group: 'vitals', match: 'reading', plausible: [10, 1_500], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBloodGlucose' }),
  q({ type: 'blood_pressure_systolic', unit: 'mmHg', ucum_unit: 'mm[Hg]', loinc_code: '8480-6', group: 'vitals', match: 'reading', plausible: [50, 300], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBloodPressureSystolic' }),
  q({ type: 'blood_pressure_diastolic', unit: 'mmHg', ucum_unit: 'mm[Hg]', loinc_code: '8462-4', group: 'vitals', match: 'reading', plausible: [20, 200], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBloodPressureDiastolic' }),
  q({ type: 'height', unit: 'm', ucum_unit: 'm', loinc_code: '8302-2', group: 'body', match: 'body', plausible: [0.3, 2.8], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierHeight' }),
  q({ type: 'body_mass_index', unit: 'count', ucum_unit: 'kg/m2', loinc_code: '39156-5', group: 'body', match: 'body', plausible: [7, 120], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBodyMassIndex' }),
  q({ type: 'lean_body_mass', unit: 'kg', ucum_unit: 'kg', loinc_code: null, group: 'body', match: 'body', plausible: [0.2, 400], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierLeanBodyMass' }),
  q({ type: 'waist_circumference', unit: 'cm', ucum_unit: 'cm', loinc_code: '8280-0', group: 'body', match: 'body', plausible: [20, 300], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierWaistCircumference' }),
  q({ type: 'basal_body_temperature', unit: 'degC', ucum_unit: 'Cel', loinc_code: null, group: 'body', match: 'body', plausible: [33, 40], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBasalBodyTemperature' }),
  q({ type: 'sleeping_wrist_temperature', unit: 'degC', ucum_unit: 'Cel', loinc_code: null, group: 'recovery', match: 'nightly', plausible: [25, 42], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierAppleSleepingWristTemperature' }),
  q({ type: 'dietary_energy_consumed', unit: 'kcal', ucum_unit: 'kcal', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 20_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryEnergyConsumed' }),
  q({ type: 'dietary_protein', unit: 'g', ucum_unit: 'g', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 2_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryProtein' }),
  q({ type: 'dietary_carbohydrates', unit: 'g', ucum_unit: 'g', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 3_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryCarbohydrates' }),
  q({ type: 'dietary_fat_total', unit: 'g', ucum_unit: 'g', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 2_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryFatTotal' }),
  q({ type: 'dietary_fiber', unit: 'g', ucum_unit: 'g', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 500], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryFiber' }),
  q({ type: 'dietary_sugar', unit: 'g', ucum_unit: 'g', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 2_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietarySugar' }),
  q({ type: 'dietary_sodium', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 100_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietarySodium' }),
  q({ type: 'dietary_water', unit: 'mL', ucum_unit: 'mL', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 20_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryWater' }),
  q({ type: 'dietary_caffeine', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 5_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryCaffeine' }),
  // Health Connect types without a HealthKit counterpart (device-b, docs/formats/device-b.md).
  q({ type: 'distance', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 1_000_000], aggregation: 'sum' }),
  q({ type: 'total_energy_burned', unit: 'kcal', ucum_unit: 'kcal', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 25_000], aggregation: 'sum' }),
  q({ type: 'basal_metabolic_rate', unit: 'kcal/d', ucum_unit: 'kcal/d', loinc_code: null, group: 'body', match: 'nightly', plausible: [500, 5_000], aggregation: 'avg' }),
  // Providers' own nightly scores, 0-100 (connectors, docs/connectors/): one type per concept so sources compare.
  q({ type: 'sleep_score', unit: 'count', ucum_unit: '{score}', loinc_code: null, group: 'sleep', match: 'nightly', plausible: [0, 100], aggregation: 'avg' }),
  q({ type: 'readiness_score', unit: 'count', ucum_unit: '{score}', loinc_code: null, group: 'recovery', match: 'nightly', plausible: [0, 100], aggregation: 'avg' }),
];

const byType = new Map(QUANTITY_CATALOG.map((t) => [t.type, t]));
const byHealthKit = new Map(QUANTITY_CATALOG.filter((t) => t.healthkit).map((t) => [t.healthkit!, t]));

/** True when `value` (in the type's storage unit) lies in the type's plausible range; an unknown type has none. */
export function isPlausibleValue(type: string, value: number): boolean {
  const t = byType.get(type);
  if (!t) return true;
  return Number.isFinite(value) && value >= t.plausible[0] && value <= t.plausible[1];
}

export function findQuantityType(type: string): QuantityType | undefined {
  return byType.get(type);
}

export function quantityTypeForHealthKit(identifier: string): QuantityType | undefined {
  return byHealthKit.get(identifier);
}
