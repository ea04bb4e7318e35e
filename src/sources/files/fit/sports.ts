/**
 * FIT sport and sub-sport (the names of the FIT profile's `sport` and `sub_sport` types, as the
 * decoder gives them) → the canonical workout types the connectors use (src/sources/providers/*
 * vocabularies). A sub-sport that names a variant the vocabulary tells apart wins over its sport;
 * a sport not listed is `other`, its FIT names kept in metadata. A multisport file's transitions
 * are `transition` (contracts §20: legs and transitions each a workout).
 */
const SUB_SPORTS: ReadonlyMap<string, string> = new Map([
  ['treadmill', 'treadmill_running'],
  ['indoor_running', 'treadmill_running'],
  ['virtual_activity', 'indoor_cycling'],
  ['indoor_cycling', 'indoor_cycling'],
  ['spin', 'indoor_cycling'],
  ['lap_swimming', 'swimming'],
  ['open_water', 'open_water_swimming'],
  ['strength_training', 'strength_training'],
  ['cardio_training', 'hiit'],
  ['hiit', 'hiit'],
  ['yoga', 'yoga'],
  ['pilates', 'pilates'],
  ['elliptical', 'elliptical'],
  ['stair_climbing', 'stair_climbing'],
  ['indoor_rowing', 'indoor_rowing'],
  ['breathing', 'breathwork'],
  ['indoor_walking', 'walking'],
]);

const SPORTS: ReadonlyMap<string, string> = new Map([
  ['running', 'running'],
  ['cycling', 'cycling'],
  ['e_biking', 'cycling'],
  ['transition', 'transition'],
  ['swimming', 'swimming'],
  ['walking', 'walking'],
  ['hiking', 'hiking'],
  ['mountaineering', 'hiking'],
  ['training', 'strength_training'],
  ['rowing', 'rowing'],
  ['paddling', 'paddling'],
  ['kayaking', 'paddling'],
  ['rafting', 'paddling'],
  ['stand_up_paddleboarding', 'paddling'],
  ['cross_country_skiing', 'skiing'],
  ['alpine_skiing', 'skiing'],
  ['snowboarding', 'snowboarding'],
  ['snowshoeing', 'snowshoeing'],
  ['inline_skating', 'skating'],
  ['ice_skating', 'ice_skating'],
  ['rock_climbing', 'climbing'],
  ['floor_climbing', 'stair_climbing'],
  ['surfing', 'surfing'],
  ['sailing', 'sailing'],
  ['golf', 'golf'],
  ['tennis', 'tennis'],
  ['table_tennis', 'table_tennis'],
  ['badminton', 'badminton'],
  ['squash', 'squash'],
  ['soccer', 'soccer'],
  ['basketball', 'basketball'],
  ['volleyball', 'volleyball'],
  ['boxing', 'boxing'],
  ['mixed_martial_arts', 'martial_arts'],
  ['dance', 'dance'],
  ['diving', 'scuba_diving'],
  ['wheelchair_push_walk', 'wheelchair'],
  ['wheelchair_push_run', 'wheelchair'],
]);

export function workoutTypeOf(sport: unknown, subSport: unknown): string {
  const sub = typeof subSport === 'string' ? SUB_SPORTS.get(subSport) : undefined;
  if (sub) return sub;
  return (typeof sport === 'string' ? SPORTS.get(sport) : undefined) ?? 'other';
}
