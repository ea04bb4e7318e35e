import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../src/shared/retryAfter.js';
import { DEFAULT_SCHEDULE_SECONDS, RetrySchedule } from '../../../src/processes/webhooks/retrySchedule.js';

describe('the retry schedule (contracts §5)', () => {
  it('is at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: about 28 hours in all', () => {
    expect(DEFAULT_SCHEDULE_SECONDS).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
    const hours = DEFAULT_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0) / 3600;
    expect(hours).toBeGreaterThan(27);
    expect(hours).toBeLessThan(29);
  });

  it('places attempt n+1 the n-th delay after attempt n, and none after the 8th failure', () => {
    const s = new RetrySchedule();
    expect(s.nextAttemptAt(1, 1_000)).toBe(6_000);
    expect(s.nextAttemptAt(2, 1_000)).toBe(301_000);
    expect(s.nextAttemptAt(7, 0)).toBe(36_000_000);
    expect(s.nextAttemptAt(8, 0)).toBeNull();
  });

  it('honours Retry-After within the schedule: later than planned when asked, never beyond the longest step', () => {
    const s = new RetrySchedule();
    expect(s.nextAttemptAt(1, 0, 60)).toBe(60_000);
    expect(s.nextAttemptAt(1, 0, 1)).toBe(5_000);
    expect(s.nextAttemptAt(1, 0, 10 ** 9)).toBe(36_000_000);
    expect(s.nextAttemptAt(8, 0, 60)).toBeNull();
  });

  it('takes 8 entries only', () => {
    expect(() => new RetrySchedule([1, 2, 3])).toThrow();
  });
});

describe('Retry-After values (RFC 9110 §10.2.3)', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');
  it('reads seconds and HTTP dates; ignores what is neither', () => {
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:01:00 GMT', now)).toBe(60);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});
