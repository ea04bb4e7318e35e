/**
 * Polar sports → canonical activity names. `detailed-sport-info` names the sport as the user
 * picked it in Flow (ROAD_RUNNING, INDOOR_CYCLING); `sport` is the coarse family. The detailed
 * name is tried first, then the family, then `other`.
 */
const SPORTS: Readonly<Record<string, string>> = {
  RUNNING: 'running',
  ROAD_RUNNING: 'running',
  TRAIL_RUNNING: 'running',
  TREADMILL_RUNNING: 'treadmill_running',
  ORIENTEERING: 'running',
  CYCLING: 'cycling',
  ROAD_BIKING: 'cycling',
  MOUNTAIN_BIKING: 'cycling',
  INDOOR_CYCLING: 'indoor_cycling',
  WALKING: 'walking',
  NORDIC_WALKING: 'walking',
  HIKING: 'hiking',
  SWIMMING: 'swimming',
  POOL_SWIMMING: 'swimming',
  OPEN_WATER_SWIMMING: 'open_water_swimming',
  STRENGTH_TRAINING: 'strength_training',
  CIRCUIT_TRAINING: 'strength_training',
  CORE: 'strength_training',
  FUNCTIONAL_TRAINING: 'strength_training',
  YOGA: 'yoga',
  PILATES: 'pilates',
  ROWING: 'rowing',
  INDOOR_ROWING: 'indoor_rowing',
  'CROSS-COUNTRY_SKIING': 'skiing',
  DOWNHILL_SKIING: 'skiing',
  SNOWBOARDING: 'snowboarding',
  FITNESS_DANCING: 'dance',
  GROUP_EXERCISE: 'fitness_class',
  GOLF: 'golf',
  TENNIS: 'tennis',
  SQUASH: 'squash',
  BADMINTON: 'badminton',
  SOCCER: 'soccer',
  BASKETBALL: 'basketball',
  VOLLEYBALL: 'volleyball',
  ICE_SKATING: 'ice_skating',
  ICE_HOCKEY: 'ice_hockey',
  CLIMBING: 'climbing',
  ELLIPTICAL: 'elliptical',
};

export function polarActivity(detailed: unknown, sport: unknown): string {
  for (const name of [detailed, sport]) {
    if (typeof name === 'string' && SPORTS[name.toUpperCase()]) return SPORTS[name.toUpperCase()]!;
  }
  return 'other';
}

/** Hypnogram values of a Polar night: 0 wake, 1 REM, 2 lighter non-REM (N1), 3 light non-REM (N2), 4 deep non-REM (N3), 5 unknown. */
export const HYPNOGRAM_PHASES: Readonly<Record<number, 'awake' | 'rem' | 'light' | 'deep' | 'asleep'>> = { 0: 'awake', 1: 'rem', 2: 'light', 3: 'light', 4: 'deep', 5: 'asleep' };

/** Exercise sample types (`sample-type`): the one read into records. */
export const HEART_RATE_SAMPLE = '0';
