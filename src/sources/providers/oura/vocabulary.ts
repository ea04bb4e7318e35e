import type { SleepPhase } from '../../../../commands/ingestion/records.js';

/**
 * Oura's words and codes and their canonical counterparts. Activity names arrive in more than one
 * spelling ("strengthTraining", "strength_training"): they are compared with case, spaces,
 * underscores and hyphens taken out. An unknown activity is `other`, its name kept in metadata.
 */
const ACTIVITIES: readonly (readonly [oura: string, canonical: string])[] = [
  ['walking', 'walking'],
  ['running', 'running'],
  ['treadmillrunning', 'treadmill_running'],
  ['cycling', 'cycling'],
  ['indoorcycling', 'indoor_cycling'],
  ['mountainbiking', 'cycling'],
  ['hiking', 'hiking'],
  ['swimming', 'swimming'],
  ['openwaterswimming', 'open_water_swimming'],
  ['strengthtraining', 'strength_training'],
  ['weightlifting', 'weightlifting'],
  ['crossfit', 'hiit'],
  ['hiit', 'hiit'],
  ['yoga', 'yoga'],
  ['pilates', 'pilates'],
  ['dancing', 'dance'],
  ['dance', 'dance'],
  ['elliptical', 'elliptical'],
  ['rowing', 'rowing'],
  ['indoorrowing', 'indoor_rowing'],
  ['stairexercise', 'stair_climbing'],
  ['stretching', 'stretching'],
  ['tennis', 'tennis'],
  ['tabletennis', 'table_tennis'],
  ['badminton', 'badminton'],
  ['squash', 'squash'],
  ['golf', 'golf'],
  ['soccer', 'soccer'],
  ['basketball', 'basketball'],
  ['volleyball', 'volleyball'],
  ['baseball', 'baseball'],
  ['softball', 'softball'],
  ['hockey', 'ice_hockey'],
  ['icehockey', 'ice_hockey'],
  ['skiing', 'skiing'],
  ['crosscountryskiing', 'skiing'],
  ['snowboarding', 'snowboarding'],
  ['iceskating', 'ice_skating'],
  ['skating', 'skating'],
  ['surfing', 'surfing'],
  ['sailing', 'sailing'],
  ['paddling', 'paddling'],
  ['kayaking', 'paddling'],
  ['rockclimbing', 'climbing'],
  ['climbing', 'climbing'],
  ['boxing', 'boxing'],
  ['martialarts', 'martial_arts'],
  ['gymnastics', 'gymnastics'],
  ['rugby', 'rugby'],
  ['americanfootball', 'american_football'],
  ['cricket', 'cricket'],
  ['handball', 'handball'],
  ['snowshoeing', 'snowshoeing'],
  ['other', 'other'],
];

const ACTIVITY_BY_KEY = new Map(ACTIVITIES);

export const activityKey = (name: string): string => name.toLowerCase().replace(/[\s_-]+/g, '');

export function ouraActivity(name: string): string {
  return ACTIVITY_BY_KEY.get(activityKey(name)) ?? 'other';
}

/** Exported for docs/connectors/oura.md and its tests. */
export const OURA_ACTIVITIES = ACTIVITIES;

/** `sleep_phase_5_min`: one character per 5 minutes from bedtime_start. */
export const PHASE_BY_CODE: Readonly<Record<string, SleepPhase['phase']>> = { '1': 'deep', '2': 'light', '3': 'rem', '4': 'awake' };

/** Sleep period `type`s that are sleep; `rest` (rest mode) and `deleted` are not stored as sessions. */
export const SLEEP_TYPES: ReadonlySet<string> = new Set(['long_sleep', 'sleep', 'late_nap']);
