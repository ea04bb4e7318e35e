import { describe, expect, it } from 'vitest';
import { SampleSummary, WorkoutWindows } from '../../../src/sources/derivations/workoutSummaries.js';

describe('workout summaries from samples (contracts §3)', () => {
  const w = (group: string, start: number, end: number, name: string) => ({ group, start, end, name });
  const windows = new WorkoutWindows([w('app', 100, 200, 'long'), w('app', 150, 160, 'short'), w('other', 0, 1000, 'other'), w('app', 500, 600, 'later')]);

  it('a stretch counts for the workouts of its own source that contain it whole', () => {
    expect(windows.containing('app', 155, 158).map((x) => x.name).sort()).toEqual(['long', 'short']);
    expect(windows.containing('app', 150, 170).map((x) => x.name)).toEqual(['long']);
    expect(windows.containing('app', 190, 510)).toEqual([]);
    expect(windows.containing('nobody', 155, 158)).toEqual([]);
  });

  it('overlapping finds a workout still running from long before', () => {
    expect(windows.overlapping('app', 195, 505).map((x) => x.name).sort()).toEqual(['later', 'long']);
    expect(windows.has('other')).toBe(true);
  });

  it('samples give the mean (to one decimal) and the highest; none give null', () => {
    const s = SampleSummary.of([120, 130, 131]);
    expect([s.count, s.mean1, s.max]).toEqual([3, 127, 131]);
    expect(SampleSummary.of([100, 101, 101]).mean1).toBe(100.7);
    const none = new SampleSummary();
    expect([none.mean, none.mean1, none.max]).toEqual([null, null, null]);
  });
});
