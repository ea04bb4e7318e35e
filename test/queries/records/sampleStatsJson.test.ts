import { join } from 'node:path';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatWithOffset, sampleStats, statsIntervals, statsWindow, type SampleStatsQuery } from '../../../queries/records/sampleStats.js';
import { sampleStatsJson, statsAnswerHead } from '../../../queries/records/sampleStatsJson.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { canonicalTimeZone } from '../../../src/shared/timeZones.js';
import { compiledSerializerCompiler } from '../../support/compiledSerializer.js';
import { SampleStatistics } from '../../../src/server/routes/sampleStats.js';
import { samplesProjection } from '../../../projections/records/samplesProjection.js';
import { tempDir } from '../../support/tmp.js';
import { quantity } from '../../server/records/pipelineFixtures.js';
import { ingested, project, USER } from '../../projections/records/harness.js';

/** The route's schema compiled as every other read route's answers are: the bytes the buckets' writer must equal. */
const serialize = compiledSerializerCompiler({ schema: SampleStatistics, method: 'GET', url: '/v1/users/:id/samples/stats' });

describe('sampleStatsJson: the buckets written as JSON are the bytes the compiled serializer writes for sampleStats buckets (issue 38: statistics written straight into the answer)', () => {
  let store: SqliteReadStore;
  let position = 0;
  const MIN = 60_000;
  const from = Date.parse('2026-03-26T00:00:00Z');
  // Series names that need escaping, and values whose sums and averages have fractions.
  const streams = [
    { provider: 'device-a', source: 'apple', every: 7 },
    { provider: 'device-b', source: 'a "quoted" \\ source\u0001 ☃ \u{1F600}', every: 11 },
    { provider: 'device-b', source: 'lone \ud800 surrogate', every: 13 },
  ];

  beforeAll(async () => {
    store = new SqliteReadStore({ path: join(tempDir(), 'read-json.sqlite') });
    await store.ensureCollections(samplesProjection.collections);
    const events = streams.map((s, k) => {
      const records: ReturnType<typeof quantity>[] = [];
      for (let m = 0; m < 12 * 1440; m += s.every) {
        const start = new Date(from + m * MIN).toISOString();
        records.push(quantity({ external_id: `${k}-${m}`, type: 'heart_rate', unit: 'count/min', value: 50 + (m % 53) + 0.1 * (m % 7), start_date: start, end_date: start, provider: s.provider, source: s.source, body_worn: k === 0 }));
      }
      // Before 1972 (Amsterdam's +00:19:32 of 1930): answered from the samples, not the rollups.
      records.push(quantity({ external_id: `${k}-1930`, type: 'heart_rate', unit: 'count/min', value: 61.5 + k, start_date: '1930-05-01T10:00:00.000Z', end_date: '1930-05-01T10:00:00.000Z', provider: s.provider, source: s.source, body_worn: k === 0 }));
      return ingested('quantity', ++position, records, { provider: s.provider, ingested_at: '2026-11-06T00:00:00.000Z' });
    });
    await project(store, samplesProjection, events);
  });
  afterAll(async () => {
    await store?.close();
  });

  async function both(q: SampleStatsQuery, maxBuckets?: number): Promise<{ got: string; want: string; buckets: number }> {
    const opts = maxBuckets !== undefined ? { maxBuckets } : {};
    const objects = await sampleStats(store, q, opts);
    const head = { type: q.type, interval: q.interval, tz: q.tz, view: q.view, start: formatWithOffset(q.window.start), end: formatWithOffset(q.window.end) };
    const json = await sampleStatsJson(store, q, opts);
    expect(json.truncated).toBe(objects.truncated);
    const pieces: string[] = [];
    json.write((s) => pieces.push(s));
    return { got: `${statsAnswerHead(q, json.truncated)}${pieces.join('')}]}`, want: serialize({ ...head, ...objects }), buckets: objects.buckets.length };
  }

  it.each(['UTC', 'Europe/Berlin', 'Asia/Kathmandu', 'Australia/Lord_Howe'])('in %s, by day and by hour, both views, with and without a provider filter', async (tz) => {
    for (const interval of ['day', 'hour'] as const) {
      const window = statsWindow('2026-03-26', '2026-04-07', interval, tz);
      for (const view of ['all', 'merged'] as const) {
        for (const provider of [undefined, 'device-b']) {
          const { got, want, buckets } = await both({ userId: USER, type: 'heart_rate', window, interval, tz, view, ...(provider ? { provider } : {}) });
          // (device-b's samples all overlap device-a's, which ranks first: none is listed in the merged view.)
          if (view === 'all' || !provider) expect(buckets, `${interval} ${view} ${provider}`).toBeGreaterThan(0);
          expect(got, `${interval} ${view} ${provider}`).toBe(want);
        }
      }
    }
  });

  it('writes the first buckets and truncated = true above the cap, at every cap around a piece of 64 (contracts §6)', async () => {
    const window = statsWindow('2026-03-26', '2026-04-07', 'hour', 'Europe/Berlin');
    for (const max of [0, 1, 63, 64, 65, 128, 129, 500]) {
      const { got, want } = await both({ userId: USER, type: 'heart_rate', window, interval: 'hour', tz: 'Europe/Berlin', view: 'all' }, max);
      expect(got, `cap ${max}`).toBe(want);
    }
  });

  it('writes the samples\' buckets where the rollups cannot answer (before 1972) and an empty window', async () => {
    const old = await both({ userId: USER, type: 'heart_rate', window: statsWindow('1930-04-30', '1930-05-03', 'day', 'Europe/Amsterdam'), interval: 'day', tz: 'Europe/Amsterdam', view: 'all' });
    expect(old.buckets).toBe(3);
    expect(old.got).toBe(old.want);
    const none = await both({ userId: USER, type: 'heart_rate', window: statsWindow('2020-01-01', '2020-01-03', 'day', 'UTC'), interval: 'day', tz: 'UTC', view: 'all' });
    expect(none.buckets).toBe(0);
    expect(none.got).toBe(none.want);
  });
});

describe('statsWindow: dates far from an offset change are widened by arithmetic, to the same window luxon gives (issue 38: the window without a dozen Intl look-ups)', () => {
  /** The window as luxon's calendar gives it (statsWindow's general path): local midnight, floored, ceiled, counted. */
  const luxonWindow = (start: string, end: string, interval: 'day' | 'hour', tz: string) => {
    // The zone as statsWindow names it to luxon (its canonical name: Asia/Katmandu for Asia/Kathmandu).
    const zone = canonicalTimeZone(tz)!;
    const s = DateTime.fromISO(start, { zone }).startOf(interval);
    const e0 = DateTime.fromISO(end, { zone });
    const f = e0.startOf(interval);
    const e = f.toMillis() === e0.toMillis() ? f : f.plus(interval === 'day' ? { days: 1 } : { hours: 1 }).startOf(interval);
    const intervals = interval === 'day' ? Math.round(e.diff(s, 'days').days) : Math.ceil((e.toMillis() - s.toMillis()) / 3_600_000);
    return { start: formatWithOffset(s), end: formatWithOffset(e), ms: [s.toMillis(), e.toMillis()], zone: s.zone.name, intervals };
  };

  it.each(['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/St_Johns', 'Pacific/Apia', 'America/Santiago'])('in %s, every date of 2026 to the next day, month and year, by day and by hour', (tz) => {
    for (let d = Date.UTC(2026, 0, 1); d < Date.UTC(2027, 0, 1); d += 86_400_000) {
      const start = new Date(d).toISOString().slice(0, 10);
      for (const days of [1, 31, 365]) {
        const end = new Date(d + days * 86_400_000).toISOString().slice(0, 10);
        for (const interval of ['day', 'hour'] as const) {
          const w = statsWindow(start, end, interval, tz);
          expect({ start: formatWithOffset(w.start), end: formatWithOffset(w.end), ms: [w.start.toMillis(), w.end.toMillis()], zone: w.start.zone.name, intervals: w.intervals }, `${start} ${end} ${interval}`).toEqual(
            luxonWindow(start, end, interval, tz),
          );
        }
      }
    }
  });
});

describe('statsIntervals: a day holding an offset change ends where luxon says, found by arithmetic where the next midnight has one reading (issue 38)', () => {
  it.each(['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/St_Johns', 'Pacific/Apia', 'America/Santiago', 'Asia/Gaza', 'America/Havana', 'Antarctica/Troll'])('in %s, every local day of 2025 to 2027', (tz) => {
    const w = statsWindow('2025-01-01', '2028-01-01', 'day', tz);
    const got = statsIntervals(w, 'day').map((i) => [i.start, i.end]);
    const want: number[][] = [];
    for (let b = w.start; b.toMillis() < w.end.toMillis(); ) {
      let next = b.plus({ days: 1 }).startOf('day');
      if (next.toMillis() <= b.toMillis()) next = b.plus({ hours: 1 });
      want.push([b.toMillis(), Math.min(next.toMillis(), w.end.toMillis())]);
      b = next;
    }
    expect(got).toEqual(want);
  });
});
