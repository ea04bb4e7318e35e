import { describe, expect, it } from 'vitest';
import { adjacent, buildModel, isCurrentBucket, lineData } from '../../console/src/components/chartModel.js';
import type { Bucket, Stats } from '../../console/src/types.js';

/** Issue 23 (console): days without data are drawn as gaps; the bucket still filling is drawn apart from the complete ones. */
const bucket = (start: string, source: string, avg: number, count = 10): Bucket => ({ start, provider: 'device-a', source, unit: 'count/min', count, sum: avg * count, avg, min: avg, max: avg });
const stats = (view: 'merged' | 'all', buckets: Bucket[], interval: 'day' | 'hour' = 'day', tz = 'UTC'): Stats => ({
  type: 'heart_rate',
  interval,
  tz,
  view,
  start: '2026-11-01T00:00:00Z',
  end: '2026-11-27T00:00:00Z',
  truncated: false,
  buckets,
});

describe('chart model', () => {
  it('days are neighbours by their local date, across a change of offset; hours by 3600 s', () => {
    expect(adjacent('2026-10-24T00:00:00+02:00', '2026-10-25T00:00:00+02:00', 'day')).toBe(true);
    // Berlin's 25-hour day: still neighbours.
    expect(adjacent('2026-10-25T00:00:00+02:00', '2026-10-26T00:00:00+01:00', 'day')).toBe(true);
    expect(adjacent('2026-10-25T00:00:00+02:00', '2026-10-27T00:00:00+01:00', 'day')).toBe(false);
    expect(adjacent('2026-11-01T08:00:00Z', '2026-11-01T09:00:00Z', 'hour')).toBe(true);
    expect(adjacent('2026-11-01T08:00:00Z', '2026-11-01T12:00:00Z', 'hour')).toBe(false);
  });

  it('a missing day breaks every line with a null point instead of a straight segment across it', () => {
    const all = [bucket('2026-11-01T00:00:00Z', 'apple', 70), bucket('2026-11-02T00:00:00Z', 'apple', 72), bucket('2026-11-06T00:00:00Z', 'apple', 74)];
    const model = buildModel(stats('merged', all), stats('all', all), 'avg', Date.parse('2026-11-26T12:00:00Z'));
    expect(model.gaps).toEqual([['2026-11-02T00:00:00Z', '2026-11-06T00:00:00Z']]);
    const line = lineData(model, 'avg', 'day');
    expect(line.lines[0]).toEqual([70, 72, null, 74]);
    expect(line.xs[2]).toBeGreaterThan(line.xs[1]!);
    expect(line.xs[2]).toBeLessThan(line.xs[3]!);
    expect(line.partialLines).toBeNull();
  });

  it('the current day is out of the solid lines and drawn with the day before it as a dotted companion', () => {
    const all = [bucket('2026-11-25T00:00:00Z', 'apple', 75), bucket('2026-11-25T00:00:00Z', 'oura', 74), bucket('2026-11-26T00:00:00Z', 'oura', 52, 1)];
    const merged = [bucket('2026-11-25T00:00:00Z', 'apple', 75), bucket('2026-11-26T00:00:00Z', 'oura', 52, 1)];
    const now = Date.parse('2026-11-26T04:00:00Z');
    const model = buildModel(stats('merged', merged), stats('all', all), 'avg', now);
    expect(model.rows.map((r) => r.partial)).toEqual([false, true]);
    const line = lineData(model, 'avg', 'day');
    expect(line.lines[0]).toEqual([75, null]);
    expect(line.partialLines![0]).toEqual([75, 52]);
    // Sources: apple has nothing today, oura's partial figure is apart from its line too.
    expect(line.lines[2]).toEqual([74, null]);
    expect(line.partialLines![2]).toEqual([74, 52]);
  });

  it('the bucket still filling is the local day (or hour) holding now, in the chart’s zone', () => {
    const now = Date.parse('2026-11-26T16:30:00Z'); // 2026-11-27 01:30 in Tokyo
    expect(isCurrentBucket('2026-11-26T00:00:00Z', 'day', 'UTC', now)).toBe(true);
    expect(isCurrentBucket('2026-11-26T00:00:00+09:00', 'day', 'Asia/Tokyo', now)).toBe(false);
    expect(isCurrentBucket('2026-11-27T00:00:00+09:00', 'day', 'Asia/Tokyo', now)).toBe(true);
    expect(isCurrentBucket('2026-11-26T16:00:00Z', 'hour', 'UTC', now)).toBe(true);
    expect(isCurrentBucket('2026-11-26T15:00:00Z', 'hour', 'UTC', now)).toBe(false);
  });
});
