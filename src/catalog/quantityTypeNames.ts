/** Names that the type's own words would spell wrong (abbreviations, HealthKit's terms). */
const NAMES: Readonly<Record<string, string>> = {
  hrv_sdnn: 'Heart rate variability (SDNN)',
  hrv_rmssd: 'Heart rate variability (RMSSD)',
  vo2_max: 'VO2 max',
  body_mass: 'Body weight',
  apple_exercise_time: 'Exercise time',
  walking_heart_rate_average: 'Walking heart rate average',
};

/**
 * A quantity type as people name it ("heart_rate" → "Heart rate"): FHIR's `code.text` (issue 23)
 * and any other human-facing label. The type's words, first letter capitalised, unless NAMES has
 * a better one.
 */
export function quantityTypeName(type: string): string {
  const named = NAMES[type];
  if (named) return named;
  const words = type.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
