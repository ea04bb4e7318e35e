/**
 * Strava's `sport_type` vocabulary (older activities only have `type`, the coarser one) →
 * canonical workout types. Virtual and indoor variants keep their indoor type; e-bikes, gravel
 * and mountain bikes are cycling (the sport type stays in metadata). Unknown names are `other`.
 */
const SPORT_TYPES: Readonly<Record<string, string>> = {
  Run: 'running',
  TrailRun: 'running',
  VirtualRun: 'treadmill_running',
  Walk: 'walking',
  Hike: 'hiking',
  Ride: 'cycling',
  MountainBikeRide: 'cycling',
  GravelRide: 'cycling',
  EBikeRide: 'cycling',
  EMountainBikeRide: 'cycling',
  Velomobile: 'cycling',
  VirtualRide: 'indoor_cycling',
  Handcycle: 'wheelchair',
  Wheelchair: 'wheelchair',
  Swim: 'swimming',
  Rowing: 'rowing',
  VirtualRow: 'indoor_rowing',
  Canoeing: 'paddling',
  Kayaking: 'paddling',
  StandUpPaddling: 'paddling',
  Surfing: 'surfing',
  Kitesurf: 'surfing',
  Windsurf: 'surfing',
  Sail: 'sailing',
  AlpineSki: 'skiing',
  BackcountrySki: 'skiing',
  NordicSki: 'skiing',
  RollerSki: 'skiing',
  Snowboard: 'snowboarding',
  Snowshoe: 'snowshoeing',
  IceSkate: 'ice_skating',
  InlineSkate: 'skating',
  Skateboard: 'skating',
  WeightTraining: 'strength_training',
  Crossfit: 'hiit',
  HighIntensityIntervalTraining: 'hiit',
  Workout: 'other',
  Yoga: 'yoga',
  Pilates: 'pilates',
  Elliptical: 'elliptical',
  StairStepper: 'stair_climbing',
  RockClimbing: 'climbing',
  Golf: 'golf',
  Soccer: 'soccer',
  Tennis: 'tennis',
  Badminton: 'badminton',
  Squash: 'squash',
  Racquetball: 'racquetball',
  TableTennis: 'table_tennis',
  Pickleball: 'racquet_sports',
  Basketball: 'basketball',
  Volleyball: 'volleyball',
  Cricket: 'cricket',
  Dance: 'dance',
};

export function workoutType(sportType: unknown, type: unknown): string {
  for (const t of [sportType, type]) if (typeof t === 'string' && Object.hasOwn(SPORT_TYPES, t)) return SPORT_TYPES[t]!;
  return 'other';
}

/** Every sport type read, for the connector's documentation and tests. */
export const STRAVA_SPORT_TYPES = SPORT_TYPES;
