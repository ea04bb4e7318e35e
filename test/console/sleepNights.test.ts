import { describe, expect, it } from 'vitest';
import { defaultNight, sleptSeconds } from '../../console/src/sleepNights.js';
import type { SleepSession } from '../../console/src/types.js';

let nextId = 1;
const session = (start: string, end: string, total = 0): SleepSession => ({
  id: nextId++,
  bedtime_start: start,
  bedtime_end: end,
  total_sleep_seconds: total,
  deep_sleep_seconds: null,
  rem_sleep_seconds: null,
  light_sleep_seconds: null,
  awake_seconds: null,
  sleep_score: null,
  resting_hr: null,
  hrv_avg_ms: null,
  respiratory_rate: null,
  spo2_avg: null,
  external_id: `night-${nextId}`,
  is_primary_source: true,
  metadata: {},
  quality: [],
  provider: 'device-a',
  source: 'Oura',
  device: null,
  ingested_at: '2026-11-03T00:00:00Z',
});

/** Issue 36 point 8: the user's page opened on a 30-minute nap (the latest session) instead of the night before. */
describe('the night a user page opens on', () => {
  it('is the longest session of the last 48 hours, not the latest nap', () => {
    const night = session('2026-11-01T22:30:00Z', '2026-11-02T06:35:00Z', 26_100);
    const nap = session('2026-11-02T13:00:00Z', '2026-11-02T13:40:00Z', 2_400);
    expect(defaultNight([night, nap])).toBe(night);
  });

  it('stays on the last days: a longer night two weeks back does not win over last night', () => {
    const old = session('2026-10-18T21:00:00Z', '2026-10-19T08:00:00Z', 36_000);
    const lastNight = session('2026-11-01T23:00:00Z', '2026-11-02T06:00:00Z', 24_000);
    const nap = session('2026-11-02T14:00:00Z', '2026-11-02T14:30:00Z', 1_800);
    expect(defaultNight([old, lastNight, nap])).toBe(lastNight);
  });

  it('measures a session without a reported total by its time in bed; a tie goes to the later one; none for no sessions', () => {
    const a = session('2026-11-01T22:00:00Z', '2026-11-02T06:00:00Z');
    expect(sleptSeconds(a)).toBe(8 * 3600);
    const b = session('2026-11-02T22:00:00Z', '2026-11-03T06:00:00Z', 8 * 3600);
    expect(defaultNight([a, b])).toBe(b);
    expect(defaultNight([])).toBeUndefined();
  });
});
