import { describe, expect, it } from 'vitest';
import { fmtTime } from '../../console/src/format.js';
import { timeTicks } from '../../console/src/components/isoTimeAxis.js';

const labels = (ticks: number[], tz: string) => ticks.map((t) => fmtTime(t, tz).slice(-5));

/** Issue 36 point 8: a 30-minute nap's hypnogram had no time ticks (only whole hours got one). */
describe('hypnogram time ticks', () => {
  it('gives a 40-minute nap ticks every few minutes, at round minutes of the zone’s clock', () => {
    const t0 = Date.parse('2026-11-02T13:00:00Z');
    const t1 = Date.parse('2026-11-02T13:40:00Z');
    // 300 px for 40 minutes: 7.5 px a minute, so a 10-minute step is the first with 48 px between labels.
    expect(labels(timeTicks(t0, t1, 7.5, 'UTC'), 'UTC')).toEqual(['13:00', '13:10', '13:20', '13:30', '13:40']);
    // Kathmandu is UTC+05:45: the ticks fall on its own round minutes.
    expect(labels(timeTicks(t0, t1, 7.5, 'Asia/Kathmandu'), 'Asia/Kathmandu')).toEqual(['18:50', '19:00', '19:10', '19:20']);
  });

  it('thins a night’s ticks to whole hours, and more, as the room per hour shrinks', () => {
    const t0 = Date.parse('2026-11-01T22:30:00Z');
    const t1 = Date.parse('2026-11-02T06:35:00Z');
    expect(labels(timeTicks(t0, t1, 1, 'UTC'), 'UTC')).toEqual(['23:00', '00:00', '01:00', '02:00', '03:00', '04:00', '05:00', '06:00']);
    expect(labels(timeTicks(t0, t1, 0.6, 'UTC'), 'UTC')).toEqual(['00:00', '02:00', '04:00', '06:00']);
  });
});
