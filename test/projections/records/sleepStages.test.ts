import { describe, expect, it } from 'vitest';
import { stageDurations } from '../../../projections/records/sleepStages.js';
import { phase, sleepSession } from './fixtures.js';

const NIGHT = { bedtime_start: '2026-11-01T22:00:00.000Z', bedtime_end: '2026-11-02T06:00:00.000Z' };
const zeros = { deep_sleep_seconds: 0, rem_sleep_seconds: 0, light_sleep_seconds: 0, awake_seconds: 0 };
const asleep = phase('asleep', '2026-11-01T22:30:00Z', '2026-11-02T05:30:00Z');
const inBed = phase('in_bed', '2026-11-01T22:00:00Z', '2026-11-02T06:00:00Z');
const awake = phase('awake', '2026-11-02T05:30:00Z', '2026-11-02T05:45:00Z');

describe('stage durations of a sleep session (contracts §17: unstaged sleep has null stages, not 0)', () => {
  it('a night of only asleep (unspecified) and in-bed phases has null deep, REM, light and awake', () => {
    expect(stageDurations(sleepSession({ ...NIGHT, ...zeros, phases: [inBed, asleep] }))).toEqual({ deep_sleep_seconds: null, rem_sleep_seconds: null, light_sleep_seconds: null, awake_seconds: null });
  });

  it('a session with no phases and zero stage totals (a Samsung session without its stage file) is unstaged too', () => {
    expect(stageDurations(sleepSession({ ...NIGHT, ...zeros, phases: [] }))).toEqual({ deep_sleep_seconds: null, rem_sleep_seconds: null, light_sleep_seconds: null, awake_seconds: null });
  });

  it('an unstaged night keeps the awake time its source reported, as an awake phase or as a total (Fitbit classic)', () => {
    expect(stageDurations(sleepSession({ ...NIGHT, ...zeros, awake_seconds: 900, phases: [asleep, awake] }))).toEqual({ deep_sleep_seconds: null, rem_sleep_seconds: null, light_sleep_seconds: null, awake_seconds: 900 });
    expect(stageDurations(sleepSession({ ...NIGHT, ...zeros, awake_seconds: 1200, phases: [] })).awake_seconds).toBe(1200);
  });

  it('a night with any stage phase keeps numbers, 0 for a stage it did not have', () => {
    const deep = phase('deep', '2026-11-01T23:00:00Z', '2026-11-02T00:00:00Z');
    expect(stageDurations(sleepSession({ ...NIGHT, ...zeros, deep_sleep_seconds: 3600, phases: [asleep, deep] }))).toEqual({ ...zeros, deep_sleep_seconds: 3600 });
  });

  it("a provider's summary without phases but with stage totals (Oura, Garmin, WHOOP) keeps its numbers", () => {
    expect(stageDurations(sleepSession({ ...NIGHT, deep_sleep_seconds: 0, rem_sleep_seconds: 5400, light_sleep_seconds: 0, awake_seconds: 0, phases: [] }))).toEqual({ ...zeros, rem_sleep_seconds: 5400 });
  });
});
