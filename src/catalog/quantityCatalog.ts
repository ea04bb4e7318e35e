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
  // Modern HealthKit types (iOS 9 to 18) the Health app exports (docs/quality.md "Catalog additions"):
  // mobility, running, cycling, swimming and wheelchair metrics, audio exposure, respiratory
  // function, and the dietary micronutrients. Their ranges bound one sample as HealthKit records it.
  q({ type: 'apple_stand_time', unit: 'min', ucum_unit: 'min', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 2_160], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierAppleStandTime' }),
  q({ type: 'time_in_daylight', unit: 'min', ucum_unit: 'min', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 2_160], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierTimeInDaylight' }),
  q({ type: 'walking_speed', unit: 'm/s', ucum_unit: 'm/s', loinc_code: null, group: 'activity', match: 'reading', plausible: [0.05, 5], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierWalkingSpeed' }),
  q({ type: 'walking_step_length', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'reading', plausible: [0.05, 2.5], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierWalkingStepLength' }),
  q({ type: 'walking_double_support_percentage', unit: '%', ucum_unit: '%', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 100], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierWalkingDoubleSupportPercentage' }),
  q({ type: 'walking_asymmetry_percentage', unit: '%', ucum_unit: '%', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 100], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierWalkingAsymmetryPercentage' }),
  q({ type: 'walking_steadiness', unit: '%', ucum_unit: '%', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 100], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierAppleWalkingSteadiness' }),
  q({ type: 'stair_ascent_speed', unit: 'm/s', ucum_unit: 'm/s', loinc_code: null, group: 'activity', match: 'reading', plausible: [0.01, 3], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierStairAscentSpeed' }),
  q({ type: 'stair_descent_speed', unit: 'm/s', ucum_unit: 'm/s', loinc_code: null, group: 'activity', match: 'reading', plausible: [0.01, 3], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierStairDescentSpeed' }),
  q({ type: 'six_minute_walk_test_distance', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'body', plausible: [0, 1_500], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierSixMinuteWalkTestDistance' }),
  q({ type: 'running_speed', unit: 'm/s', ucum_unit: 'm/s', loinc_code: null, group: 'activity', match: 'reading', plausible: [0.1, 12.5], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierRunningSpeed' }),
  q({ type: 'running_power', unit: 'W', ucum_unit: 'W', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 2_500], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierRunningPower' }),
  q({ type: 'running_stride_length', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'reading', plausible: [0.1, 3], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierRunningStrideLength' }),
  q({ type: 'running_vertical_oscillation', unit: 'cm', ucum_unit: 'cm', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 30], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierRunningVerticalOscillation' }),
  q({ type: 'running_ground_contact_time', unit: 'ms', ucum_unit: 'ms', loinc_code: null, group: 'activity', match: 'reading', plausible: [50, 1_500], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierRunningGroundContactTime' }),
  q({ type: 'cycling_speed', unit: 'm/s', ucum_unit: 'm/s', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 40], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierCyclingSpeed' }),
  q({ type: 'cycling_power', unit: 'W', ucum_unit: 'W', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 3_000], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierCyclingPower' }),
  q({ type: 'cycling_cadence', unit: 'count/min', ucum_unit: '/min', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 250], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierCyclingCadence' }),
  q({ type: 'cycling_functional_threshold_power', unit: 'W', ucum_unit: 'W', loinc_code: null, group: 'activity', match: 'nightly', plausible: [0, 700], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierCyclingFunctionalThresholdPower' }),
  q({ type: 'physical_effort', unit: 'kcal/hr·kg', ucum_unit: 'kcal/(h.kg)', loinc_code: null, group: 'activity', match: 'reading', plausible: [0, 30], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierPhysicalEffort' }),
  q({ type: 'swimming_distance', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 100_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDistanceSwimming' }),
  q({ type: 'swimming_stroke_count', unit: 'count', ucum_unit: '{strokes}', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 100_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierSwimmingStrokeCount' }),
  q({ type: 'wheelchair_distance', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 300_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDistanceWheelchair' }),
  q({ type: 'push_count', unit: 'count', ucum_unit: '{pushes}', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 150_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierPushCount' }),
  q({ type: 'downhill_snow_sports_distance', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'activity', match: 'count', plausible: [0, 300_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDistanceDownhillSnowSports' }),
  q({ type: 'number_of_times_fallen', unit: 'count', ucum_unit: '{falls}', loinc_code: null, group: 'other', match: 'count', plausible: [0, 100], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierNumberOfTimesFallen' }),
  q({ type: 'uv_exposure', unit: 'count', ucum_unit: '{UV_index}', loinc_code: null, group: 'other', match: 'reading', plausible: [0, 20], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierUVExposure' }),
  q({ type: 'environmental_audio_exposure', unit: 'dBASPL', ucum_unit: 'dB', loinc_code: null, group: 'other', match: 'reading', plausible: [0, 200], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierEnvironmentalAudioExposure' }),
  q({ type: 'headphone_audio_exposure', unit: 'dBASPL', ucum_unit: 'dB', loinc_code: null, group: 'other', match: 'reading', plausible: [0, 200], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierHeadphoneAudioExposure' }),
  q({ type: 'environmental_sound_reduction', unit: 'dBASPL', ucum_unit: 'dB', loinc_code: null, group: 'other', match: 'reading', plausible: [0, 200], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierEnvironmentalSoundReduction' }),
  q({ type: 'heart_rate_recovery_one_minute', unit: 'count/min', ucum_unit: '/min', loinc_code: null, group: 'heart', match: 'reading', plausible: [0, 150], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierHeartRateRecoveryOneMinute' }),
  q({ type: 'atrial_fibrillation_burden', unit: '%', ucum_unit: '%', loinc_code: null, group: 'heart', match: 'nightly', plausible: [0, 100], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierAtrialFibrillationBurden' }),
  q({ type: 'sleeping_breathing_disturbances', unit: 'count', ucum_unit: '{events}', loinc_code: null, group: 'sleep', match: 'nightly', plausible: [0, 100], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierAppleSleepingBreathingDisturbances' }),
  q({ type: 'peripheral_perfusion_index', unit: '%', ucum_unit: '%', loinc_code: null, group: 'vitals', match: 'reading', plausible: [0, 30], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierPeripheralPerfusionIndex' }),
  q({ type: 'forced_vital_capacity', unit: 'L', ucum_unit: 'L', loinc_code: '19870-5', group: 'vitals', match: 'reading', plausible: [0.1, 10], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierForcedVitalCapacity' }),
  q({ type: 'forced_expiratory_volume_1', unit: 'L', ucum_unit: 'L', loinc_code: '20150-9', group: 'vitals', match: 'reading', plausible: [0.1, 8], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierForcedExpiratoryVolume1' }),
  q({ type: 'peak_expiratory_flow_rate', unit: 'L/min', ucum_unit: 'L/min', loinc_code: null, group: 'vitals', match: 'reading', plausible: [10, 1_000], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierPeakExpiratoryFlowRate' }),
  q({ type: 'inhaler_usage', unit: 'count', ucum_unit: '{puffs}', loinc_code: null, group: 'vitals', match: 'count', plausible: [0, 100], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierInhalerUsage' }),
  q({ type: 'insulin_delivery', unit: 'IU', ucum_unit: '[iU]', loinc_code: null, group: 'vitals', match: 'count', plausible: [0, 300], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierInsulinDelivery' }),
  q({ type: 'blood_alcohol_content', unit: '%', ucum_unit: '%', loinc_code: null, group: 'vitals', match: 'reading', plausible: [0, 1], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierBloodAlcoholContent' }),
  q({ type: 'electrodermal_activity', unit: 'mcS', ucum_unit: 'uS', loinc_code: null, group: 'vitals', match: 'reading', plausible: [0, 100], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierElectrodermalActivity' }),
  q({ type: 'underwater_depth', unit: 'm', ucum_unit: 'm', loinc_code: null, group: 'other', match: 'reading', plausible: [0, 350], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierUnderwaterDepth' }),
  q({ type: 'water_temperature', unit: 'degC', ucum_unit: 'Cel', loinc_code: null, group: 'other', match: 'reading', plausible: [-5, 45], aggregation: 'avg', healthkit: 'HKQuantityTypeIdentifierWaterTemperature' }),
  q({ type: 'number_of_alcoholic_beverages', unit: 'count', ucum_unit: '{drinks}', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 100], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierNumberOfAlcoholicBeverages' }),
  q({ type: 'dietary_fat_saturated', unit: 'g', ucum_unit: 'g', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 1_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryFatSaturated' }),
  q({ type: 'dietary_fat_monounsaturated', unit: 'g', ucum_unit: 'g', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 1_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryFatMonounsaturated' }),
  q({ type: 'dietary_fat_polyunsaturated', unit: 'g', ucum_unit: 'g', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 1_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryFatPolyunsaturated' }),
  q({ type: 'dietary_cholesterol', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 20_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryCholesterol' }),
  q({ type: 'dietary_potassium', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 50_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryPotassium' }),
  q({ type: 'dietary_calcium', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 20_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryCalcium' }),
  q({ type: 'dietary_iron', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 1_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryIron' }),
  q({ type: 'dietary_magnesium', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 10_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryMagnesium' }),
  q({ type: 'dietary_phosphorus', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 20_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryPhosphorus' }),
  q({ type: 'dietary_zinc', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 1_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryZinc' }),
  q({ type: 'dietary_copper', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 100], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryCopper' }),
  q({ type: 'dietary_manganese', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 200], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryManganese' }),
  q({ type: 'dietary_chloride', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 100_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryChloride' }),
  q({ type: 'dietary_selenium', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 5_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietarySelenium' }),
  q({ type: 'dietary_iodine', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 10_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryIodine' }),
  q({ type: 'dietary_chromium', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 5_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryChromium' }),
  q({ type: 'dietary_molybdenum', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 5_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryMolybdenum' }),
  q({ type: 'dietary_vitamin_a', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 100_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryVitaminA' }),
  q({ type: 'dietary_vitamin_b6', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 1_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryVitaminB6' }),
  q({ type: 'dietary_vitamin_b12', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 10_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryVitaminB12' }),
  q({ type: 'dietary_vitamin_c', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 50_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryVitaminC' }),
  q({ type: 'dietary_vitamin_d', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 10_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryVitaminD' }),
  q({ type: 'dietary_vitamin_e', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 5_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryVitaminE' }),
  q({ type: 'dietary_vitamin_k', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 10_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryVitaminK' }),
  q({ type: 'dietary_thiamin', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 1_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryThiamin' }),
  q({ type: 'dietary_riboflavin', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 1_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryRiboflavin' }),
  q({ type: 'dietary_niacin', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 5_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryNiacin' }),
  q({ type: 'dietary_folate', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 20_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryFolate' }),
  q({ type: 'dietary_biotin', unit: 'mcg', ucum_unit: 'ug', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 100_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryBiotin' }),
  q({ type: 'dietary_pantothenic_acid', unit: 'mg', ucum_unit: 'mg', loinc_code: null, group: 'nutrition', match: 'count', plausible: [0, 5_000], aggregation: 'sum', healthkit: 'HKQuantityTypeIdentifierDietaryPantothenicAcid' }),
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
