import { describe, expect, it } from 'vitest';
import { PLATFORM_EXERCISE_NAMES, platformExercise } from '../../../../src/sources/files/health-connect/vocabulary.js';

describe('health-connect exercise types (the platform constants the database stores)', () => {
  it('maps every platform exercise type to a canonical activity through device-b’s names', () => {
    const unmapped = PLATFORM_EXERCISE_NAMES.map((_, code) => platformExercise(code)).filter((e) => e.activity === 'other');
    expect(unmapped.map((e) => e.name)).toEqual(['EXERCISE_SESSION_TYPE_UNKNOWN', 'EXERCISE_SESSION_TYPE_OTHER_WORKOUT']);
  });

  it('reads the platform ints, not the Jetpack client’s (33 is running here, 56 in device-b)', () => {
    expect(platformExercise(33).activity).toBe('running');
    expect(platformExercise(53).activity).toBe('walking');
    expect(platformExercise(4).activity).toBe('cycling');
    expect(platformExercise(999)).toEqual({ activity: 'other', name: null, code: 999 });
    expect(platformExercise(null)).toEqual({ activity: 'other', name: null, code: null });
  });
});
