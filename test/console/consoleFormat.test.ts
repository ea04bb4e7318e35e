import { describe, expect, it } from 'vitest';
import { fmtDuration, fmtLag, fmtTime, isoParts } from '../../console/src/format.js';
import { syncAttempts } from '../../console/src/syncAttempts.js';
import { isIsoDay, daysEnding } from '../../console/src/days.js';

/** Issue 23 (console): one date format (ISO 8601) everywhere, lag in words, sync-run attempts counted right. */
describe('console formats', () => {
  it('writes times as YYYY-MM-DD HH:MM (24 h) in the chosen zone, whatever the locale', () => {
    expect(fmtTime('2026-11-05T21:07:00Z')).toBe('2026-11-05 21:07');
    expect(fmtTime('2026-11-05T21:07:00Z', 'Asia/Tokyo')).toBe('2026-11-06 06:07');
    expect(fmtTime('2026-03-29T00:30:00Z', 'Europe/Berlin')).toBe('2026-03-29 01:30');
    expect(fmtTime('2026-11-05T00:00:00Z', 'America/New_York')).toBe('2026-11-04 19:00');
    expect(isoParts(Date.parse('2026-01-01T00:00:00Z'), 'UTC')).toEqual({ date: '2026-01-01', time: '00:00' });
    expect(fmtTime(null)).toBe('—');
  });

  it('shows a sleep stage the source did not report (null, contracts §17) as "—", a measured 0 as "0 min"', () => {
    expect(fmtDuration(null)).toBe('—');
    expect(fmtDuration(0)).toBe('0 min');
    expect(fmtDuration(5400)).toBe('1 h 30 min');
  });

  it('humanises a lag: seconds, minutes, "2 h 15 min", days, "4.9 years"', () => {
    expect(fmtLag(42)).toBe('42 s');
    expect(fmtLag(600)).toBe('10 min');
    expect(fmtLag(2 * 3600 + 15 * 60)).toBe('2 h 15 min');
    expect(fmtLag(3 * 86_400 + 4 * 3600 + 59)).toBe('3 d 4 h');
    expect(fmtLag(64 * 86_400 + 5)).toBe('64 days');
    expect(fmtLag(153_145_428)).toBe('4.9 years');
    expect(fmtLag(null)).toBe('—');
  });

  it('counts a sync run’s attempts from its failed attempts (spec "Sync run": attempts = failed attempts so far)', () => {
    expect(syncAttempts({ status: 'succeeded', attempts: 0, started_at: '2026-11-01T00:00:00Z' })).toBe('1 attempt');
    expect(syncAttempts({ status: 'succeeded', attempts: 2, started_at: '2026-11-01T00:00:00Z' })).toBe('3 attempts (2 failed)');
    expect(syncAttempts({ status: 'running', attempts: 1, started_at: '2026-11-01T00:00:00Z' })).toBe('attempt 2 running (1 failed)');
    expect(syncAttempts({ status: 'queued', attempts: 0, started_at: null })).toBe('not started');
    expect(syncAttempts({ status: 'retrying', attempts: 2, started_at: '2026-11-01T00:00:00Z' })).toBe('2 failed attempts');
    expect(syncAttempts({ status: 'failed', attempts: 8, started_at: '2026-11-01T00:00:00Z' })).toBe('8 failed attempts');
    expect(syncAttempts({ status: 'cancelled', attempts: 0, started_at: null })).toBe('not started');
  });

  it('takes only real days written YYYY-MM-DD, and builds windows of whole UTC days', () => {
    expect(isIsoDay('2026-02-28')).toBe(true);
    expect(isIsoDay('2026-02-30')).toBe(false);
    expect(isIsoDay('11/26/2026')).toBe(false);
    expect(isIsoDay('2026-1-05')).toBe(false);
    expect(daysEnding(30, Date.parse('2026-09-27T18:00:00Z'))).toEqual({ start: '2026-08-29', end: '2026-09-28' });
  });
});
