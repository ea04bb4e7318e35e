/**
 * Category types the service knows by name: the canonical names the device parsers give category
 * samples (docs/formats/device-a.md "Category types and values": HealthKit's
 * `HKCategoryTypeIdentifier<Name>` → snake_case of Name, with four renamed; device-b stores
 * `menstrual_flow`). The device-a parser keeps any category identifier it is sent, so this list
 * is the vocabulary of names a caller may use where a category type is expected (the keys of a
 * user's source order, contracts §6), not a filter on what is stored.
 */

/** HealthKit category identifiers (without the `HKCategoryTypeIdentifier` prefix), iOS 18. */
const HEALTHKIT_CATEGORY_IDENTIFIERS = [
  'SleepAnalysis',
  'AppleStandHour',
  'MindfulSession',
  'MenstrualFlow',
  'CervicalMucusQuality',
  'OvulationTestResult',
  'PregnancyTestResult',
  'ProgesteroneTestResult',
  'IntermenstrualBleeding',
  'InfrequentMenstrualCycles',
  'IrregularMenstrualCycles',
  'PersistentIntermenstrualBleeding',
  'ProlongedMenstrualPeriods',
  'SexualActivity',
  'Pregnancy',
  'Lactation',
  'Contraceptive',
  'BleedingDuringPregnancy',
  'BleedingAfterPregnancy',
  'HighHeartRateEvent',
  'LowHeartRateEvent',
  'IrregularHeartRhythmEvent',
  'LowCardioFitnessEvent',
  'AppleWalkingSteadinessEvent',
  'SleepApneaEvent',
  'AudioExposureEvent',
  'EnvironmentalAudioExposureEvent',
  'HeadphoneAudioExposureEvent',
  'ToothbrushingEvent',
  'HandwashingEvent',
  // Symptoms.
  'AbdominalCramps',
  'Acne',
  'AppetiteChanges',
  'BladderIncontinence',
  'Bloating',
  'BreastPain',
  'ChestTightnessOrPain',
  'Chills',
  'Constipation',
  'Coughing',
  'Diarrhea',
  'Dizziness',
  'DrySkin',
  'Fainting',
  'Fatigue',
  'Fever',
  'GeneralizedBodyAche',
  'HairLoss',
  'Headache',
  'Heartburn',
  'HotFlashes',
  'LossOfSmell',
  'LossOfTaste',
  'LowerBackPain',
  'MemoryLapse',
  'MoodChanges',
  'Nausea',
  'NightSweats',
  'PelvicPain',
  'RapidPoundingOrFlutteringHeartbeat',
  'RunnyNose',
  'ShortnessOfBreath',
  'SinusCongestion',
  'SkippedHeartbeat',
  'SleepChanges',
  'SoreThroat',
  'VaginalDryness',
  'Vomiting',
  'Wheezing',
] as const;

/** The device-a parser's renames (docs/formats/device-a.md). */
const RENAMED: Readonly<Record<string, string>> = {
  AppleStandHour: 'stand_hour',
  MindfulSession: 'mindful_session',
  SleepAnalysis: 'sleep_analysis',
  MenstrualFlow: 'menstrual_flow',
};

/** The device-a parser's PascalCase → snake_case (acronyms kept together). */
const snake = (pascal: string) =>
  pascal
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();

export const CATEGORY_TYPES: readonly string[] = HEALTHKIT_CATEGORY_IDENTIFIERS.map((id) => RENAMED[id] ?? snake(id));

/** HealthKit identifiers of the known category types, as device-a uploads name them (tests check the parser agrees). */
export const HEALTHKIT_CATEGORY_TYPE_IDENTIFIERS: readonly string[] = HEALTHKIT_CATEGORY_IDENTIFIERS.map((id) => `HKCategoryTypeIdentifier${id}`);

const known = new Set(CATEGORY_TYPES);

export function isCategoryType(type: string): boolean {
  return known.has(type);
}
