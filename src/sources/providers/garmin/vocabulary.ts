import type { SleepPhase } from '../../../../commands/ingestion/records.js';
import type { ConsentCategory } from '../../../catalog/providerFacts.js';

/**
 * Garmin's activity types (the `activityType` of activity summaries, upper snake case) → the
 * canonical workout types the other connectors use. Garmin has many variants of a sport; each
 * maps onto the sport. A type not in the table is `other`, with Garmin's name kept in metadata.
 */
const ACTIVITY_TYPES: readonly (readonly [garmin: string, canonical: string])[] = [
  ['RUNNING', 'running'],
  ['STREET_RUNNING', 'running'],
  ['TRAIL_RUNNING', 'running'],
  ['TRACK_RUNNING', 'running'],
  ['ULTRA_RUN', 'running'],
  ['OBSTACLE_RUN', 'running'],
  ['VIRTUAL_RUN', 'treadmill_running'],
  ['TREADMILL_RUNNING', 'treadmill_running'],
  ['INDOOR_RUNNING', 'treadmill_running'],
  ['CYCLING', 'cycling'],
  ['ROAD_BIKING', 'cycling'],
  ['MOUNTAIN_BIKING', 'cycling'],
  ['GRAVEL_CYCLING', 'cycling'],
  ['CYCLOCROSS', 'cycling'],
  ['TRACK_CYCLING', 'cycling'],
  ['RECUMBENT_CYCLING', 'cycling'],
  ['BMX', 'cycling'],
  ['E_BIKE_FITNESS', 'cycling'],
  ['E_BIKE_MOUNTAIN', 'cycling'],
  ['INDOOR_CYCLING', 'indoor_cycling'],
  ['VIRTUAL_RIDE', 'indoor_cycling'],
  ['WALKING', 'walking'],
  ['CASUAL_WALKING', 'walking'],
  ['SPEED_WALKING', 'walking'],
  ['INDOOR_WALKING', 'walking'],
  ['HIKING', 'hiking'],
  ['MOUNTAINEERING', 'hiking'],
  ['SWIMMING', 'swimming'],
  ['LAP_SWIMMING', 'swimming'],
  ['OPEN_WATER_SWIMMING', 'open_water_swimming'],
  ['STRENGTH_TRAINING', 'strength_training'],
  ['CARDIO_TRAINING', 'hiit'],
  ['HIIT', 'hiit'],
  ['FITNESS_EQUIPMENT', 'other'],
  ['ELLIPTICAL', 'elliptical'],
  ['STAIR_CLIMBING', 'stair_climbing'],
  ['FLOOR_CLIMBING', 'stair_climbing'],
  ['INDOOR_ROWING', 'indoor_rowing'],
  ['ROWING', 'rowing'],
  ['YOGA', 'yoga'],
  ['PILATES', 'pilates'],
  ['BREATHWORK', 'breathwork'],
  ['RESORT_SKIING_SNOWBOARDING', 'skiing'],
  ['RESORT_SKIING', 'skiing'],
  ['RESORT_SNOWBOARDING', 'snowboarding'],
  ['BACKCOUNTRY_SKIING_SNOWBOARDING_WS', 'skiing'],
  ['CROSS_COUNTRY_SKIING_WS', 'skiing'],
  ['SKATE_SKIING_WS', 'skiing'],
  ['SNOWSHOEING_WS', 'snowshoeing'],
  ['INLINE_SKATING', 'skating'],
  ['SKATING_WS', 'ice_skating'],
  ['ROCK_CLIMBING', 'climbing'],
  ['INDOOR_CLIMBING', 'climbing'],
  ['BOULDERING', 'climbing'],
  ['STAND_UP_PADDLEBOARDING', 'paddling'],
  ['KAYAKING_V2', 'paddling'],
  ['WHITEWATER_RAFTING_KAYAKING', 'paddling'],
  ['SURFING', 'surfing'],
  ['SAILING_V2', 'sailing'],
  ['GOLF', 'golf'],
  ['TENNIS', 'tennis'],
  ['TABLE_TENNIS', 'table_tennis'],
  ['BADMINTON', 'badminton'],
  ['SQUASH', 'squash'],
  ['SOCCER', 'soccer'],
  ['BASKETBALL', 'basketball'],
  ['VOLLEYBALL', 'volleyball'],
  ['BOXING', 'boxing'],
  ['MIXED_MARTIAL_ARTS', 'martial_arts'],
  ['DANCE', 'dance'],
  ['DIVING', 'scuba_diving'],
  ['WHEELCHAIR_PUSH_RUN', 'wheelchair'],
  ['WHEELCHAIR_PUSH_WALK', 'wheelchair'],
  ['OTHER', 'other'],
];

const BY_GARMIN = new Map(ACTIVITY_TYPES);

/** Every Garmin activity type the table knows, for docs and tests. */
export const GARMIN_ACTIVITY_TYPES: readonly string[] = ACTIVITY_TYPES.map(([g]) => g);

export function workoutType(activityType: string | null): string {
  if (activityType === null) return 'other';
  return BY_GARMIN.get(activityType.trim().toUpperCase()) ?? 'other';
}

/** The keys of a sleep summary's `sleepLevelsMap` → sleep phases (Garmin's four levels). */
export const SLEEP_LEVELS: Readonly<Record<string, SleepPhase['phase']>> = {
  deep: 'deep',
  light: 'light',
  rem: 'rem',
  awake: 'awake',
};

/**
 * `validation` of a sleep summary: Garmin sends a tentative summary first and replaces it (same
 * summaryId) once the night is analysed; MANUAL ones were entered by the user.
 */
export const TENTATIVE_SLEEP_VALIDATIONS: ReadonlySet<string> = new Set(['AUTO_TENTATIVE', 'ENHANCED_TENTATIVE']);
export const MANUAL_SLEEP_VALIDATIONS: ReadonlySet<string> = new Set(['MANUAL', 'AUTO_MANUAL']);

/**
 * Notification keys Garmin's push service sends, one per summary type. The data types are the
 * keys as Garmin names them (`PulledPayload.dataType`).
 */
export const SUMMARY_TYPES = [
  'dailies',
  'epochs',
  'sleeps',
  'activities',
  'activityDetails',
  'bodyComps',
  'hrv',
  'stressDetails',
  'pulseox',
  'respiration',
  'userMetrics',
] as const;
export type SummaryType = (typeof SUMMARY_TYPES)[number];

/** Notifications about the user's registration rather than data: they change the connection. */
export const ACCOUNT_NOTIFICATIONS = ['deregistrations', 'userPermissionsChange'] as const;
export type AccountNotification = (typeof ACCOUNT_NOTIFICATIONS)[number];

/** Garmin's permission names → what they allow (userPermissionsChange lists the ones the user kept). */
export const DATA_PERMISSION = 'HEALTH_EXPORT';
export const ACTIVITY_PERMISSION = 'ACTIVITY_EXPORT';

/**
 * The consent category (contracts §7) each summary type falls under: a push of a type whose
 * category the connection no longer holds (the user narrowed Garmin's permissions) is not stored.
 */
export const SUMMARY_CATEGORY: Readonly<Record<SummaryType, ConsentCategory>> = {
  dailies: 'activity',
  epochs: 'activity',
  stressDetails: 'activity',
  userMetrics: 'activity',
  sleeps: 'sleep',
  activities: 'workouts',
  activityDetails: 'workouts',
  bodyComps: 'body',
  hrv: 'heart',
  pulseox: 'heart',
  respiration: 'heart',
};
