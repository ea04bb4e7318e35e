import type { SleepPhase } from '../../../../commands/ingestion/records.js';

/**
 * Samsung Health's constants as its SDK documents them: the predefined exercise types
 * (HealthConstants.Exercise.EXERCISE_TYPE) and the sleep stages (HealthConstants.SleepStage).
 * An exercise type not listed is `other`, its code kept in the record's metadata.
 */

const EXERCISES: readonly (readonly [code: number, name: string, activity: string])[] = [
  [1001, 'Walking', 'walking'],
  [1002, 'Running', 'running'],
  [2001, 'Baseball', 'baseball'],
  [2002, 'Softball', 'softball'],
  [2003, 'Cricket', 'cricket'],
  [3001, 'Golf', 'golf'],
  [3002, 'Billiards', 'other'],
  [3003, 'Bowling', 'other'],
  [4001, 'Hockey', 'hockey'],
  [4002, 'Rugby', 'rugby'],
  [4003, 'Basketball', 'basketball'],
  [4004, 'Football', 'soccer'],
  [4005, 'Handball', 'handball'],
  [4006, 'American football', 'american_football'],
  [5001, 'Volleyball', 'volleyball'],
  [5002, 'Beach volleyball', 'volleyball'],
  [6001, 'Squash', 'squash'],
  [6002, 'Tennis', 'tennis'],
  [6003, 'Badminton', 'badminton'],
  [6004, 'Table tennis', 'table_tennis'],
  [6005, 'Racquetball', 'racquetball'],
  [7001, 'Boxing', 'boxing'],
  [7002, 'Martial arts', 'martial_arts'],
  [8001, 'Ballet', 'dance'],
  [8002, 'Dancing', 'dance'],
  [8003, 'Ballroom dancing', 'dance'],
  [9001, 'Pilates', 'pilates'],
  [9002, 'Yoga', 'yoga'],
  [10001, 'Stretching', 'stretching'],
  [10002, 'Jump rope', 'jump_rope'],
  [10003, 'Hula-hooping', 'other'],
  [10004, 'Push-ups', 'strength_training'],
  [10005, 'Pull-ups', 'strength_training'],
  [10006, 'Sit-ups', 'strength_training'],
  [10007, 'Circuit training', 'strength_training'],
  [10008, 'Mountain climbers', 'strength_training'],
  [10009, 'Jumping jacks', 'calisthenics'],
  [10010, 'Burpee', 'calisthenics'],
  [10011, 'Bench press', 'weightlifting'],
  [10012, 'Squats', 'strength_training'],
  [10013, 'Lunges', 'strength_training'],
  [10014, 'Leg presses', 'weightlifting'],
  [10015, 'Leg extensions', 'weightlifting'],
  [10016, 'Leg curls', 'weightlifting'],
  [10017, 'Back extensions', 'strength_training'],
  [10018, 'Lat pull-downs', 'weightlifting'],
  [10019, 'Deadlifts', 'weightlifting'],
  [10020, 'Shoulder presses', 'weightlifting'],
  [10021, 'Front raises', 'weightlifting'],
  [10022, 'Lateral raises', 'weightlifting'],
  [10023, 'Crunches', 'strength_training'],
  [10024, 'Leg raises', 'strength_training'],
  [10025, 'Plank', 'strength_training'],
  [10026, 'Arm curls', 'weightlifting'],
  [10027, 'Arm extensions', 'weightlifting'],
  [11001, 'Inline skating', 'skating'],
  [11002, 'Hang gliding', 'paragliding'],
  [11003, 'Pistol shooting', 'other'],
  [11004, 'Archery', 'other'],
  [11005, 'Horseback riding', 'other'],
  [11007, 'Cycling', 'cycling'],
  [11008, 'Flying disc', 'disc_sports'],
  [11009, 'Roller skating', 'skating'],
  [12001, 'Aerobics', 'fitness_class'],
  [13001, 'Hiking', 'hiking'],
  [13002, 'Rock climbing', 'climbing'],
  [13003, 'Backpacking', 'hiking'],
  [13004, 'Mountain biking', 'cycling'],
  [13005, 'Orienteering', 'running'],
  [14001, 'Swimming', 'swimming'],
  [14002, 'Aquarobics', 'fitness_class'],
  [14003, 'Canoeing', 'paddling'],
  [14004, 'Sailing', 'sailing'],
  [14005, 'Scuba diving', 'scuba_diving'],
  [14006, 'Snorkeling', 'other'],
  [14007, 'Kayaking', 'paddling'],
  [14008, 'Kitesurfing', 'surfing'],
  [14009, 'Rafting', 'paddling'],
  [14010, 'Rowing machine', 'indoor_rowing'],
  [14011, 'Windsurfing', 'surfing'],
  [14012, 'Yachting', 'sailing'],
  [14013, 'Water skiing', 'other'],
  [15001, 'Step machine', 'stair_climbing'],
  [15002, 'Weight machine', 'strength_training'],
  [15003, 'Exercise bike', 'indoor_cycling'],
  [15004, 'Rowing machine', 'indoor_rowing'],
  [15005, 'Treadmill', 'treadmill_running'],
  [15006, 'Elliptical trainer', 'elliptical'],
  [16001, 'Cross-country skiing', 'skiing'],
  [16002, 'Skiing', 'skiing'],
  [16003, 'Ice dancing', 'ice_skating'],
  [16004, 'Ice skating', 'ice_skating'],
  [16006, 'Ice hockey', 'ice_hockey'],
  [16007, 'Snowboarding', 'snowboarding'],
  [16008, 'Alpine skiing', 'skiing'],
  [16009, 'Snowshoeing', 'snowshoeing'],
];

const BY_CODE = new Map(EXERCISES.map(([code, name, activity]) => [code, { name, activity }]));

/** exercise_type → canonical activity; 0 is the SDK's custom type (its name is in exercise_custom_type or title). */
export function samsungExercise(code: number | null): { activity: string; name: string | null } {
  const e = code === null ? undefined : BY_CODE.get(code);
  return e ? { activity: e.activity, name: e.name } : { activity: 'other', name: code === 0 ? 'Custom' : null };
}

export const SAMSUNG_EXERCISE_TYPES = EXERCISES;

/** HealthConstants.SleepStage.STAGE: 40001 awake, 40002 light, 40003 deep, 40004 REM. */
export const SLEEP_STAGES: ReadonlyMap<number, SleepPhase['phase']> = new Map([
  [40001, 'awake'],
  [40002, 'light'],
  [40003, 'deep'],
  [40004, 'rem'],
]);
