import type { SleepPhase } from '../../../../commands/ingestion/records.js';

/**
 * Fitbit activity names (`activityName` of an activity log) → canonical workout types. Fitbit
 * names its activity types in English whatever the user's locale; the type id is kept in the
 * record's metadata. An unknown name is `other`.
 */
const ACTIVITY_NAMES: readonly (readonly [name: string, type: string])[] = [
  ['run', 'running'],
  ['running', 'running'],
  ['treadmill', 'treadmill_running'],
  ['walk', 'walking'],
  ['walking', 'walking'],
  ['hike', 'hiking'],
  ['hiking', 'hiking'],
  ['bike', 'cycling'],
  ['outdoor bike', 'cycling'],
  ['biking', 'cycling'],
  ['mountain biking', 'cycling'],
  ['spinning', 'indoor_cycling'],
  ['stationary bike', 'indoor_cycling'],
  ['swim', 'swimming'],
  ['swimming', 'swimming'],
  ['elliptical', 'elliptical'],
  ['weights', 'strength_training'],
  ['weight lifting', 'weightlifting'],
  ['strength training', 'strength_training'],
  ['circuit training', 'strength_training'],
  ['workout', 'other'],
  ['aerobic workout', 'fitness_class'],
  ['interval workout', 'hiit'],
  ['hiit', 'hiit'],
  ['bootcamp', 'bootcamp'],
  ['yoga', 'yoga'],
  ['pilates', 'pilates'],
  ['dancing', 'dance'],
  ['dance', 'dance'],
  ['kickboxing', 'boxing'],
  ['boxing', 'boxing'],
  ['martial arts', 'martial_arts'],
  ['rowing machine', 'indoor_rowing'],
  ['rowing', 'rowing'],
  ['stairclimber', 'stair_climbing'],
  ['tennis', 'tennis'],
  ['golf', 'golf'],
  ['soccer', 'soccer'],
  ['basketball', 'basketball'],
  ['skiing', 'skiing'],
  ['snowboarding', 'snowboarding'],
  ['sport', 'other'],
];
const BY_NAME = new Map(ACTIVITY_NAMES);

export function fitbitActivityType(name: unknown): string {
  if (typeof name !== 'string') return 'other';
  return BY_NAME.get(name.trim().toLowerCase()) ?? 'other';
}

/** Every activity name read, for the connector's documentation and tests. */
export const FITBIT_ACTIVITY_NAMES = ACTIVITY_NAMES;

/**
 * Sleep levels: `stages` logs (deep, light, rem, wake) and `classic` logs (asleep, restless,
 * awake). Restless minutes are moments of movement Fitbit does not count as sleep
 * (`minutesAsleep` leaves them out), so they are awake time here too.
 */
export const SLEEP_LEVELS: Readonly<Record<string, SleepPhase['phase']>> = {
  deep: 'deep',
  light: 'light',
  rem: 'rem',
  wake: 'awake',
  asleep: 'asleep',
  restless: 'awake',
  awake: 'awake',
};

/** Distance units a log may name (`distanceUnit`); Fitbit answers metric (kilometres) when no locale is asked for. */
export const DISTANCE_METRES: Readonly<Record<string, number>> = {
  kilometer: 1000,
  km: 1000,
  mile: 1609.344,
  meter: 1,
  steps: Number.NaN,
};
