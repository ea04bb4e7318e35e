/**
 * WHOOP sports: `sport_id` (the developer API's documented list) with WHOOP's name for it, and the
 * canonical activity. v2 answers also carry `sport_name`; the name is read first (compared with
 * case, spaces, hyphens and underscores taken out), the id second. Unknown sports are `other`.
 */
const SPORTS: readonly (readonly [id: number, name: string, canonical: string])[] = [
  [-1, 'Activity', 'other'],
  [0, 'Running', 'running'],
  [1, 'Cycling', 'cycling'],
  [16, 'Baseball', 'baseball'],
  [17, 'Basketball', 'basketball'],
  [18, 'Rowing', 'rowing'],
  [19, 'Fencing', 'fencing'],
  [20, 'Field Hockey', 'field_hockey'],
  [21, 'Football', 'american_football'],
  [22, 'Golf', 'golf'],
  [24, 'Ice Hockey', 'ice_hockey'],
  [25, 'Lacrosse', 'lacrosse'],
  [27, 'Rugby', 'rugby'],
  [28, 'Sailing', 'sailing'],
  [29, 'Skiing', 'skiing'],
  [30, 'Soccer', 'soccer'],
  [31, 'Softball', 'softball'],
  [32, 'Squash', 'squash'],
  [33, 'Swimming', 'swimming'],
  [34, 'Tennis', 'tennis'],
  [35, 'Track & Field', 'track_and_field'],
  [36, 'Volleyball', 'volleyball'],
  [37, 'Water Polo', 'water_polo'],
  [38, 'Wrestling', 'wrestling'],
  [39, 'Boxing', 'boxing'],
  [42, 'Dance', 'dance'],
  [43, 'Pilates', 'pilates'],
  [44, 'Yoga', 'yoga'],
  [45, 'Weightlifting', 'weightlifting'],
  [47, 'Cross Country Skiing', 'skiing'],
  [48, 'Functional Fitness', 'cross_training'],
  [49, 'Duathlon', 'multisport'],
  [51, 'Gymnastics', 'gymnastics'],
  [52, 'Hiking/Rucking', 'hiking'],
  [53, 'Horseback Riding', 'equestrian_sports'],
  [55, 'Kayaking', 'paddling'],
  [56, 'Martial Arts', 'martial_arts'],
  [57, 'Mountain Biking', 'cycling'],
  [59, 'Powerlifting', 'weightlifting'],
  [60, 'Rock Climbing', 'climbing'],
  [61, 'Paddleboarding', 'paddling'],
  [62, 'Triathlon', 'multisport'],
  [63, 'Walking', 'walking'],
  [64, 'Surfing', 'surfing'],
  [65, 'Elliptical', 'elliptical'],
  [66, 'Stairmaster', 'stair_climbing'],
  [70, 'Meditation', 'mind_and_body'],
  [71, 'Other', 'other'],
  [73, 'Diving', 'scuba_diving'],
  [82, 'Ultimate', 'disc_sports'],
  [83, 'Climber', 'stair_climbing'],
  [84, 'Jumping Rope', 'jump_rope'],
  [85, 'Australian Football', 'australian_football'],
  [86, 'Skateboarding', 'skating'],
  [91, 'Snowboarding', 'snowboarding'],
  [94, 'Obstacle Course Racing', 'running'],
  [96, 'HIIT', 'hiit'],
  [97, 'Spin', 'indoor_cycling'],
  [98, 'Jiu Jitsu', 'martial_arts'],
  [100, 'Cricket', 'cricket'],
  [101, 'Pickleball', 'pickleball'],
  [102, 'Inline Skating', 'skating'],
  [103, 'Box Fitness', 'boxing'],
  [107, 'Barre', 'barre'],
  [126, 'Assault Bike', 'indoor_cycling'],
  [127, 'Kickboxing', 'martial_arts'],
  [128, 'Stretching', 'stretching'],
  [230, 'Table Tennis', 'table_tennis'],
  [231, 'Badminton', 'badminton'],
  [232, 'Netball', 'netball'],
  [239, 'Ice Skating', 'ice_skating'],
  [240, 'Handball', 'handball'],
];

const key = (name: string) => name.toLowerCase().replace(/[\s_&/-]+/g, '');
const BY_NAME = new Map(SPORTS.map(([, name, canonical]) => [key(name), canonical]));
const BY_ID = new Map(SPORTS.map(([id, , canonical]) => [id, canonical]));

export function whoopActivity(sportName: string | null, sportId: number | null): string {
  return (sportName ? BY_NAME.get(key(sportName)) : undefined) ?? (sportId !== null ? BY_ID.get(sportId) : undefined) ?? 'other';
}

/** Exported for docs/connectors/whoop.md and its tests. */
export const WHOOP_SPORTS = SPORTS;
