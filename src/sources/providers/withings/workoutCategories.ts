/**
 * Withings workout categories (getworkouts `category`) → canonical activity names (the vocabulary
 * the workout records of every provider share). Categories not listed become `other`, with the
 * number kept in metadata.
 */
export const WORKOUT_CATEGORIES: Readonly<Record<number, string>> = {
  1: 'walking',
  2: 'running',
  3: 'hiking',
  4: 'skating',
  5: 'cycling',
  6: 'cycling',
  7: 'swimming',
  8: 'surfing',
  9: 'kitesurfing',
  10: 'windsurfing',
  11: 'bodyboarding',
  12: 'tennis',
  13: 'table_tennis',
  14: 'squash',
  15: 'badminton',
  16: 'weightlifting',
  17: 'calisthenics',
  18: 'elliptical',
  19: 'pilates',
  20: 'basketball',
  21: 'soccer',
  22: 'american_football',
  23: 'rugby',
  24: 'volleyball',
  25: 'water_polo',
  26: 'horse_riding',
  27: 'golf',
  28: 'yoga',
  29: 'dance',
  30: 'boxing',
  31: 'fencing',
  32: 'wrestling',
  33: 'martial_arts',
  34: 'skiing',
  35: 'snowboarding',
  36: 'other',
  187: 'rowing',
  188: 'dance',
  191: 'baseball',
  192: 'handball',
  193: 'hockey',
  194: 'ice_hockey',
  195: 'climbing',
  196: 'ice_skating',
  272: 'multisport',
  306: 'walking',
  307: 'treadmill_running',
  308: 'indoor_cycling',
};

export function workoutActivity(category: number): string {
  return WORKOUT_CATEGORIES[category] ?? 'other';
}
