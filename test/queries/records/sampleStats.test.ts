import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketSamples, formatWithOffset, sampleStats, statsWindow, type SampleStatsResult, type StatsRow } from '../../../queries/records/sampleStats.js';
import type { ReadStore } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { InvalidTimeWindowError } from '../../../src/shared/timeWindow.js';
import { tempDir } from '../../support/tmp.js';
import { quantity } from '../../server/records/pipelineFixtures.js';
import { samplesProjection } from '../../../projections/records/samplesProjection.js';
import { PackedRun } from '../../../projections/records/sampleRollups/rollupLayout.js';
import { ingested, project, USER } from '../../projections/records/harness.js';
import { decodeBlock, SAMPLE_BLOCKS, type SampleBlockDoc } from '../../../projections/records/sampleBlocks/sampleBlock.js';

const row = (start_date: string, value: number, over: Partial<StatsRow> = {}): StatsRow => ({
  start_date,
  value,
  provider: 'device-a',
  source: 'apple',
  unit: 'count',
  ...over,
});

describe('statsWindow: widening start and end to whole intervals (spec Reads rule 2; Conventions 2)', () => {
  it('widens start down and end up to whole days in tz, keeping the local offset (Reads rule 2)', () => {
    const w = statsWindow('2026-11-01T10:30:00Z', '2026-11-02T08:00:00Z', 'day', 'Europe/Berlin');
    expect(formatWithOffset(w.start)).toBe('2026-11-01T00:00:00+01:00');
    expect(formatWithOffset(w.end)).toBe('2026-11-03T00:00:00+01:00');
    expect(w.intervals).toBe(2);
  });

  it('leaves a start or end already on a boundary alone (Reads rule 2: whole intervals)', () => {
    const w = statsWindow('2026-11-01T00:00:00+01:00', '2026-11-02T00:00:00+01:00', 'day', 'Europe/Berlin');
    expect(formatWithOffset(w.start)).toBe('2026-11-01T00:00:00+01:00');
    expect(formatWithOffset(w.end)).toBe('2026-11-02T00:00:00+01:00');
    expect(w.intervals).toBe(1);
  });

  it('reads a YYYY-MM-DD date as midnight in tz, not midnight UTC (Conventions 2: "midnight in tz for statistics")', () => {
    const w = statsWindow('2026-11-01', '2026-11-02', 'day', 'America/New_York');
    expect(formatWithOffset(w.start)).toBe('2026-11-01T00:00:00-04:00');
    // 2026-11-01 is the day New York leaves daylight time: the day is 25 hours long.
    expect(formatWithOffset(w.end)).toBe('2026-11-02T00:00:00-05:00');
    expect(w.end.toMillis() - w.start.toMillis()).toBe(25 * 3_600_000);
  });

  it('widens to whole hours for interval=hour (Reads rule 2)', () => {
    const w = statsWindow('2026-11-01T10:15:00Z', '2026-11-01T12:00:01Z', 'hour', 'UTC');
    expect(formatWithOffset(w.start)).toBe('2026-11-01T10:00:00+00:00');
    expect(formatWithOffset(w.end)).toBe('2026-11-01T13:00:00+00:00');
    expect(w.intervals).toBe(3);
  });

  it('gives a 23-hour day on 2026-03-29 and a 25-hour day on 2026-10-25 in Europe/Berlin (Reads rule 2: a day runs local midnight to local midnight)', () => {
    const spring = statsWindow('2026-03-29', '2026-03-30', 'day', 'Europe/Berlin');
    expect(formatWithOffset(spring.start)).toBe('2026-03-29T00:00:00+01:00');
    expect(formatWithOffset(spring.end)).toBe('2026-03-30T00:00:00+02:00');
    expect(spring.end.toMillis() - spring.start.toMillis()).toBe(23 * 3_600_000);
    const autumn = statsWindow('2026-10-25', '2026-10-26', 'day', 'Europe/Berlin');
    expect(formatWithOffset(autumn.start)).toBe('2026-10-25T00:00:00+02:00');
    expect(formatWithOffset(autumn.end)).toBe('2026-10-26T00:00:00+01:00');
    expect(autumn.end.toMillis() - autumn.start.toMillis()).toBe(25 * 3_600_000);
    expect(statsWindow('2026-03-29', '2026-03-30', 'hour', 'Europe/Berlin').intervals).toBe(23);
    expect(statsWindow('2026-10-25', '2026-10-26', 'hour', 'Europe/Berlin').intervals).toBe(25);
  });

  it('allows exactly 10000 intervals after start and refuses 10001 (Reads rule 2; Limits: statistics span)', () => {
    expect(statsWindow('2000-01-01', '2027-05-19', 'day', 'Europe/Berlin').intervals).toBe(10_000);
    expect(() => statsWindow('2000-01-01', '2027-05-20', 'day', 'Europe/Berlin')).toThrow(InvalidTimeWindowError);
    expect(statsWindow('2026-01-01T00:00:00Z', '2027-02-21T16:00:00Z', 'hour', 'UTC').intervals).toBe(10_000);
    expect(() => statsWindow('2026-01-01T00:00:00Z', '2027-02-21T16:00:01Z', 'hour', 'UTC')).toThrow(/10000/);
  });

  it('counts the limit after widening (Reads rule 2: "widened … at most 10000 intervals after start")', () => {
    // 9999 whole days plus a little on each side widens to 10001 days.
    expect(() => statsWindow('2000-01-01T12:00:00Z', '2027-05-19T00:00:01Z', 'day', 'UTC')).toThrow(InvalidTimeWindowError);
  });

  it('refuses an unknown zone, an unparsable time and end before start (Reads rule 2; Errors: invalid time window)', () => {
    expect(() => statsWindow('2026-11-01', '2026-11-02', 'day', 'Mars/Olympus_Mons')).toThrow(/IANA/);
    expect(() => statsWindow('yesterday', '2026-11-02', 'day', 'UTC')).toThrow(/start/);
    expect(() => statsWindow('2026-11-01', '2026-02-30', 'day', 'UTC')).toThrow(/end/);
    expect(() => statsWindow('2026-11-02', '2026-11-01', 'day', 'UTC')).toThrow(/before/);
  });
});

describe('bucketSamples: one series per provider, source and unit (spec Sample statistics; Reads rule 2)', () => {
  it('sums, counts and averages per local day, with min and max (Sample statistics: bucket fields)', () => {
    const { buckets, truncated } = bucketSamples(
      [row('2026-10-31T23:30:00.000Z', 10), row('2026-11-01T05:00:00.000Z', 30), row('2026-11-01T22:59:59.000Z', 5), row('2026-11-01T23:00:00.000Z', 7)],
      { interval: 'day', tz: 'Europe/Berlin' },
    );
    expect(truncated).toBe(false);
    expect(buckets).toEqual([
      { start: '2026-11-01T00:00:00+01:00', provider: 'device-a', source: 'apple', unit: 'count', count: 3, sum: 45, avg: 15, min: 5, max: 30 },
      { start: '2026-11-02T00:00:00+01:00', provider: 'device-a', source: 'apple', unit: 'count', count: 1, sum: 7, avg: 7, min: 7, max: 7 },
    ]);
  });

  it('keeps providers, sources and units apart and orders by start, provider, source, unit (Reads: samples/stats order; rule 2: series are not summed)', () => {
    const { buckets } = bucketSamples(
      [
        row('2026-11-01T08:00:00.000Z', 1, { provider: 'device-b', source: 'samsung' }),
        row('2026-11-01T08:10:00.000Z', 2, { provider: 'device-a', source: 'garmin' }),
        row('2026-11-01T08:20:00.000Z', 3, { provider: 'device-a', source: 'apple', unit: 'km' }),
        row('2026-11-01T08:30:00.000Z', 4, { provider: 'device-a', source: 'apple' }),
        row('2026-11-01T07:59:00.000Z', 5, { provider: 'device-b', source: 'samsung' }),
      ],
      { interval: 'hour', tz: 'UTC' },
    );
    expect(buckets.map((b) => [b.start, b.provider, b.source, b.unit, b.sum])).toEqual([
      ['2026-11-01T07:00:00+00:00', 'device-b', 'samsung', 'count', 5],
      ['2026-11-01T08:00:00+00:00', 'device-a', 'apple', 'count', 4],
      ['2026-11-01T08:00:00+00:00', 'device-a', 'apple', 'km', 3],
      ['2026-11-01T08:00:00+00:00', 'device-a', 'garmin', 'count', 2],
      ['2026-11-01T08:00:00+00:00', 'device-b', 'samsung', 'count', 1],
    ]);
  });

  it('puts the whole 23-hour and 25-hour Berlin days into one bucket each (Reads rule 2: DST days)', () => {
    const spring = bucketSamples([row('2026-03-28T23:00:00.000Z', 1), row('2026-03-29T21:59:59.000Z', 1), row('2026-03-29T22:00:00.000Z', 1)], {
      interval: 'day',
      tz: 'Europe/Berlin',
    });
    expect(spring.buckets.map((b) => [b.start, b.count])).toEqual([
      ['2026-03-29T00:00:00+01:00', 2],
      ['2026-03-30T00:00:00+02:00', 1],
    ]);
    const autumn = bucketSamples([row('2026-10-24T22:00:00.000Z', 1), row('2026-10-25T22:59:59.000Z', 1), row('2026-10-25T23:00:00.000Z', 1)], {
      interval: 'day',
      tz: 'Europe/Berlin',
    });
    expect(autumn.buckets.map((b) => [b.start, b.count])).toEqual([
      ['2026-10-25T00:00:00+02:00', 2],
      ['2026-10-26T00:00:00+01:00', 1],
    ]);
  });

  it('gives the repeated hour of 2026-10-25 in Berlin two buckets told apart by their offset (Reads rule 2: hour intervals in tz)', () => {
    const rows = Array.from({ length: 25 }, (_, h) => row(new Date(Date.UTC(2026, 9, 24, 22 + h)).toISOString(), 1));
    const { buckets } = bucketSamples(rows, { interval: 'hour', tz: 'Europe/Berlin' });
    expect(buckets).toHaveLength(25);
    expect(buckets.filter((b) => b.start.startsWith('2026-10-25T02:00:00')).map((b) => b.start)).toEqual(['2026-10-25T02:00:00+02:00', '2026-10-25T02:00:00+01:00']);
    const springRows = Array.from({ length: 23 }, (_, h) => row(new Date(Date.UTC(2026, 2, 28, 23 + h)).toISOString(), 1));
    const spring = bucketSamples(springRows, { interval: 'hour', tz: 'Europe/Berlin' });
    expect(spring.buckets).toHaveLength(23);
    expect(spring.buckets.some((b) => b.start.startsWith('2026-03-29T02:'))).toBe(false);
  });

  it('counts every sample, and is truncated only above the bucket cap, then holding the first buckets (contracts §6: truncated counts bucket rows, never samples)', () => {
    const rows = [row('2026-11-01T00:00:00.000Z', 1), row('2026-11-01T01:00:00.000Z', 2), row('2026-11-02T00:00:00.000Z', 4)];
    expect(bucketSamples(rows, { interval: 'day', tz: 'UTC', maxBuckets: 2 })).toMatchObject({ truncated: false, buckets: [{ count: 2, sum: 3 }, { count: 1, sum: 4 }] });
    const capped = bucketSamples(rows, { interval: 'day', tz: 'UTC', maxBuckets: 1 });
    expect(capped.truncated).toBe(true);
    expect(capped.buckets).toEqual([expect.objectContaining({ start: '2026-11-01T00:00:00+00:00', count: 2, sum: 3 })]);
    const many = Array.from({ length: 120_000 }, (_, i) => row(new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), 1));
    const days = bucketSamples(many, { interval: 'day', tz: 'UTC' });
    expect(days.truncated).toBe(false);
    expect(days.buckets.reduce((n, b) => n + b.count, 0)).toBe(120_000);
  });
});

describe('sampleStats: the read behind the statistics (spec Reads rule 2; Merged view)', () => {
  let store: SqliteReadStore;
  const user = USER;
  let position = 0;
  /** One step count of one stream, stored through the samples projection (flags and rollups included). */
  const sample = (id: number, start: string, value: number, over: { provider?: string; source?: string; body_worn?: boolean } = {}) => {
    const { provider = 'device-a', source = 'apple', body_worn = true } = over;
    const record = quantity({ external_id: `s${id}`, value, start_date: start, provider, source, body_worn });
    // Received after the last of them, so none is flagged `future` (contracts §15).
    return ingested('quantity', ++position, [record], { provider, ingested_at: '2026-11-06T00:00:00.000Z' });
  };

  beforeAll(async () => {
    store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections(samplesProjection.collections);
    await project(store, samplesProjection, [
      sample(1, '2026-11-01T08:00:00.000Z', 100),
      sample(2, '2026-11-01T09:00:00.000Z', 200),
      // An overlapping count from a lower ranked source: hidden in the merged view.
      sample(3, '2026-11-01T08:00:30.000Z', 999, { provider: 'device-b', source: 'samsung', body_worn: false }),
      sample(4, '2026-11-02T09:00:00.000Z', 50, { provider: 'device-b', source: 'samsung', body_worn: false }),
      sample(5, '2026-11-05T09:00:00.000Z', 1),
    ]);
  });
  afterAll(async () => {
    await store?.close();
  });

  const q = (over: Partial<Parameters<typeof sampleStats>[1]> = {}) => ({
    userId: user,
    type: 'step_count',
    window: statsWindow('2026-11-01', '2026-11-03', 'day', 'UTC'),
    interval: 'day' as const,
    tz: 'UTC',
    view: 'merged' as const,
    ...over,
  });

  it('counts only what the merged view lists with view=merged, every record with view=all (Merged view; Reads rule 2)', async () => {
    const merged = await sampleStats(store, q(), { chunk: 2 });
    expect(merged.buckets.map((b) => [b.start.slice(0, 10), b.provider, b.sum])).toEqual([
      ['2026-11-01', 'device-a', 300],
      ['2026-11-02', 'device-b', 50],
    ]);
    const all = await sampleStats(store, q({ view: 'all' }), { chunk: 2 });
    expect(all.buckets.map((b) => [b.start.slice(0, 10), b.provider, b.sum])).toEqual([
      ['2026-11-01', 'device-a', 300],
      ['2026-11-01', 'device-b', 999],
      ['2026-11-02', 'device-b', 50],
    ]);
  });

  it('keeps a provider filter to that provider and still hides what a better source covers (Reads: samples/stats provider filter; Merged view)', async () => {
    const merged = await sampleStats(store, q({ provider: 'device-b' }));
    expect(merged.buckets.map((b) => [b.start.slice(0, 10), b.sum])).toEqual([['2026-11-02', 50]]);
  });

  it('reads only the widened window (Reads rule 2)', async () => {
    const r = await sampleStats(store, q({ window: statsWindow('2026-11-05T12:00:00Z', '2026-11-05T12:00:01Z', 'day', 'UTC'), view: 'all' }));
    expect(r.buckets.map((b) => b.sum)).toEqual([1]);
  });

  it('reads every sample in chunks, and is truncated only when the buckets exceed the cap, keeping the first (contracts §6)', async () => {
    const all = await sampleStats(store, q({ view: 'all' }), { chunk: 1 });
    expect(all.truncated).toBe(false);
    const r = await sampleStats(store, q({ view: 'all' }), { maxBuckets: 2, chunk: 1 });
    expect(r.truncated).toBe(true);
    expect(r.buckets).toEqual(all.buckets.slice(0, 2));
    expect((await sampleStats(store, q({ view: 'all' }), { maxBuckets: all.buckets.length })).truncated).toBe(false);
  });
});

describe('sampleStats: the rollups answer what bucketing every sample answers, in any zone and in any order a store reads them (issue 38; Reads rule 2; Merged view)', () => {
  let store: SqliteReadStore;
  /** joinBytes answering its groups, and the days joined in each, in reverse order: a store promises no order within a group. */
  let reversed: ReadStore;
  let position = 0;
  let total = 0;
  const MIN = 60_000;
  const from = Date.parse('2026-03-26T00:00:00Z');

  beforeAll(async () => {
    store = new SqliteReadStore({ path: join(tempDir(), 'read-rollups.sqlite') });
    await store.ensureCollections(samplesProjection.collections);
    const fieldsReversed = (bytes: Buffer): Buffer => {
      const run = new PackedRun(bytes);
      const fields: Buffer[] = [];
      for (let at = 0; at < run.byteLength; at = run.endOf(at)) fields.unshift(bytes.subarray(at, run.endOf(at)));
      return Buffer.concat(fields);
    };
    reversed = {
      joinBytes: async (c: string, q: Parameters<ReadStore['joinBytes']>[1]) => (await store.joinBytes(c, q)).reverse().map(({ group, bytes }) => ({ group, bytes: fieldsReversed(bytes) })),
    } as unknown as ReadStore;
    // Twelve days around Berlin's change of 2026-03-29 and Lord Howe's of 2026-04-05: one stream
    // every 7 minutes except every third hour, a lower ranked one every 11 minutes (hidden in the
    // merged view where the first has a reading within 5 minutes), heart rates with fractions
    // (sums whose order of addition shows in their last bits).
    const streams = [
      { provider: 'device-a', source: 'apple', body_worn: true, every: 7, gaps: true },
      { provider: 'device-b', source: 'samsung', body_worn: false, every: 11, gaps: false },
    ];
    const events = streams.map((s) => {
      const records: ReturnType<typeof quantity>[] = [];
      for (let m = 0; m < 12 * 1440; m += s.every) {
        if (s.gaps && Math.floor(m / 60) % 3 === 0) continue;
        const start = new Date(from + m * MIN).toISOString();
        records.push(quantity({ external_id: `${s.source}-${m}`, type: 'heart_rate', unit: 'count/min', value: 50 + (m % 53) + 0.1 * (m % 7), start_date: start, end_date: start, provider: s.provider, source: s.source, body_worn: s.body_worn }));
      }
      total += records.length;
      return ingested('quantity', ++position, records, { provider: s.provider, ingested_at: '2026-11-06T00:00:00.000Z' });
    });
    await project(store, samplesProjection, events);
  });
  afterAll(async () => {
    await store?.close();
  });

  /** The brute force: every stored sample of the view, bucketed one by one. */
  async function bruteForce(q: Parameters<typeof sampleStats>[1]) {
    // Every block of the user's type decoded (issue 38: samples are stored in blocks), the view's counted samples kept.
    const blocks = await store.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter: { user_id: q.userId, type: q.type, ...(q.provider ? { provider: q.provider } : {}) } });
    const rows: StatsRow[] = blocks
      .flatMap((b) => decodeBlock(b.data))
      .filter((s) => s.excluded !== true && (q.view !== 'merged' || s.hidden !== true))
      .sort((a, b) => (a.start_date < b.start_date ? -1 : a.start_date > b.start_date ? 1 : 0));
    return bucketSamples(rows, { interval: q.interval, tz: q.tz, window: q.window });
  }
  /** Sums may differ from the brute force's in their last bits (they are added per quarter, then per day). */
  const close = (got: SampleStatsResult, want: SampleStatsResult) => {
    expect(got.truncated).toBe(want.truncated);
    expect(got.buckets.map(({ sum, avg, ...b }) => b)).toEqual(want.buckets.map(({ sum, avg, ...b }) => b));
    got.buckets.forEach((b, i) => expect(b.sum).toBeCloseTo(want.buckets[i]!.sum, 6));
  };

  it.each(['UTC', 'Europe/Berlin', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/St_Johns'])('in %s, by day and by hour, both views, with and without a provider filter', async (tz) => {
    for (const interval of ['day', 'hour'] as const) {
      const window = statsWindow('2026-03-26', '2026-04-07', interval, tz);
      for (const view of ['all', 'merged'] as const) {
        for (const provider of [undefined, 'device-b']) {
          const q = { userId: USER, type: 'heart_rate', window, interval, tz, view, ...(provider ? { provider } : {}) };
          const got = await sampleStats(store, q);
          expect(got.buckets.length, `${interval} ${view} ${provider}`).toBeGreaterThan(0);
          close(got, await bruteForce(q));
          // The same bits whatever order the store answers in: days are added in ascending order.
          expect(await sampleStats(reversed, q), `${interval} ${view} ${provider} reversed`).toEqual(got);
        }
      }
    }
  });

  it('refuses a store\'s join that holds a day twice or a day outside the window, rather than count it twice', async () => {
    const q = { userId: USER, type: 'heart_rate', window: statsWindow('2026-03-28', '2026-03-30', 'day', 'Asia/Kathmandu'), interval: 'day' as const, tz: 'Asia/Kathmandu', view: 'all' as const };
    const doubled = { joinBytes: async (c: string, jq: Parameters<ReadStore['joinBytes']>[1]) => (await store.joinBytes(c, jq)).map(({ group, bytes }) => ({ group, bytes: Buffer.concat([bytes, bytes]) })) } as unknown as ReadStore;
    await expect(sampleStats(doubled, q)).rejects.toThrow(/outside the window or twice/);
    // Every day of the twelve, whatever the window asked for.
    const wide = { joinBytes: async (c: string, jq: Parameters<ReadStore['joinBytes']>[1]) => store.joinBytes(c, { ...jq, filter: { ...jq.filter, day: { $gte: '2026-03-01' } } }) } as unknown as ReadStore;
    await expect(sampleStats(wide, q)).rejects.toThrow(/outside the window or twice/);
  });

  it('over 10000 days of Berlin (27 years of daylight-saving changes) counts every sample once', async () => {
    const window = statsWindow('2000-01-01', '2027-05-19', 'day', 'Europe/Berlin');
    const q = { userId: USER, type: 'heart_rate', window, interval: 'day' as const, tz: 'Europe/Berlin', view: 'all' as const };
    const got = await sampleStats(store, q);
    expect(got.buckets.reduce((n, b) => n + b.count, 0)).toBe(total);
    close(got, await bruteForce(q));
  });
});
