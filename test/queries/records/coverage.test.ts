import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coverageReport, dayCondition } from '../../../queries/records/coverage.js';
import type { Doc } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../support/tmp.js';
import { quantity } from '../../server/records/pipelineFixtures.js';
import { samplesProjection } from '../../../projections/records/samplesProjection.js';
import { ingested, project } from '../../projections/records/harness.js';
import { daily } from '../../projections/records/fixtures.js';
import { dailySummariesProjection } from '../../../projections/records/dailySummariesProjection.js';

const U = 'user-1';
let store: SqliteReadStore;
let n = 0;

const stream = (provider: string, source: string) => ({ provider, source, body_worn: source !== 'samsung', device: null });
/** A step count stored through the samples projection, which keeps the coverage counters. */
const sample = (start: string, type: string, provider = 'device-a', source = 'apple') => {
  ++n;
  const record = quantity({ external_id: `s${n}`, type, value: 10, start_date: start, ...stream(provider, source) });
  return ingested('quantity', n, [record], { provider, user_id: U, ingested_at: `2026-11-0${(n % 5) + 1}T00:00:00.000Z` });
};

beforeAll(async () => {
  store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
  await store.ensureCollections([...samplesProjection.collections, ...dailySummariesProjection.collections, { name: 'sleep_sessions' }]);
  await project(store, samplesProjection, [
    sample('2026-11-01T08:00:00.000Z', 'step_count'),
    sample('2026-11-02T08:00:00.000Z', 'step_count'),
    sample('2026-11-03T08:00:00.000Z', 'step_count', 'device-b', 'samsung'),
  ]);
  // Two providers' summaries of the same date: the merged view keeps the better ranked one.
  const summary = (provider: string, source: string) =>
    ingested('daily_summary', ++n, [daily({ external_id: `day-${provider}`, date: '2026-11-02', ...stream(provider, source) })], { provider, user_id: U, ingested_at: '2026-11-03T00:00:00.000Z' });
  await project(store, dailySummariesProjection, [summary('device-a', 'apple'), summary('device-b', 'samsung')]);
  const docs: { collection: string; doc: Doc }[] = [
    {
      collection: 'sleep_sessions',
      doc: { _id: 'z1', id: 1, user_id: U, bedtime_start: '2026-11-01T22:00:00.000Z', bedtime_end: '2026-11-02T06:00:00.000Z', day: '2026-11-01', ingested_at: '2026-11-09T00:00:00.000Z', ...stream('device-a', 'apple') },
    },
  ];
  await store.applyChanges(docs.map((d) => ({ op: 'put' as const, collection: d.collection, doc: d.doc })));
});
afterAll(async () => {
  await store?.close();
});

const report = (over: Partial<Parameters<typeof coverageReport>[1]> = {}, opts: Parameters<typeof coverageReport>[2] = {}) =>
  coverageReport(store, { userId: U, window: { start: null, end: null }, view: 'all', ...over }, opts);

describe('coverageReport (spec Coverage report; Reads rule 3)', () => {
  it('counts every record collection that exists and 0 for those that do not, naming non-sample kinds by collection (Coverage report: metrics)', async () => {
    const r = await report();
    expect(r.days.map((d) => [d.date, d.provider, d.records, d.metrics])).toEqual([
      ['2026-11-01', 'device-a', 2, { step_count: 1, sleep_sessions: 1 }],
      ['2026-11-02', 'device-a', 2, { step_count: 1, daily_summaries: 1 }],
      ['2026-11-02', 'device-b', 1, { daily_summaries: 1 }],
      ['2026-11-03', 'device-b', 1, { step_count: 1 }],
    ]);
    expect(r.days[0]!.last_synced_at).toBe('2026-11-09T00:00:00.000Z');
    expect(r).toMatchObject({ pending_jobs: 0, parked_jobs: 0, rejected_records: 0, truncated: false });
  });

  it('is truncated above the day cap and then holds the earliest days (Reads rule 3: "days then hold the earliest")', async () => {
    const r = await report({}, { maxDays: 2 });
    expect(r.truncated).toBe(true);
    expect(r.days.map((d) => [d.date, d.provider])).toEqual([
      ['2026-11-01', 'device-a'],
      ['2026-11-02', 'device-a'],
    ]);
    expect((await report({}, { maxDays: 4 })).truncated).toBe(false);
  });

  it('with view=merged hides a worse source’s daily summary of the same date but keeps its day listed (Merged view; Coverage report)', async () => {
    const r = await report({ view: 'merged' });
    expect(r.days.find((d) => d.date === '2026-11-02' && d.provider === 'device-b')).toMatchObject({ records: 0, metrics: {} });
    expect(r.days.find((d) => d.date === '2026-11-02' && d.provider === 'device-a')).toMatchObject({ records: 2 });
    // Samples of different days do not match: nothing hidden.
    expect(r.days.find((d) => d.date === '2026-11-03')).toMatchObject({ records: 1 });
  });

  it('selects days from the day of start to the last day starting before end (Conventions 2; Reads: coverage start, end)', async () => {
    expect(dayCondition({ start: Date.parse('2026-11-01T10:00:00Z'), end: Date.parse('2026-11-03T00:00:00Z') })).toEqual({ $gte: '2026-11-01', $lt: '2026-11-03' });
    expect(dayCondition({ start: null, end: Date.parse('2026-11-03T00:00:01Z') })).toEqual({ $lt: '2026-11-04' });
    const r = await report({ window: { start: Date.parse('2026-11-02T00:00:00Z'), end: Date.parse('2026-11-03T00:00:00Z') } });
    expect(r.days.map((d) => d.date)).toEqual(['2026-11-02', '2026-11-02']);
  });

  it('folds each group into its day as it is read, never asking for a whole list of groups (issue 38: years of groups alive at once grew the main thread by 100 MB)', async () => {
    // A store whose list-returning aggregate fails for anything grouped (one total still answers): the
    // report must come out of aggregateEach alone, the same in both views.
    const aggregate: SqliteReadStore['aggregate'] = (collection, query) =>
      query.groupBy.length ? Promise.reject(new Error('coverage asked for a whole list of groups')) : store.aggregate(collection, query);
    const streamed = new Proxy(store, { get: (target, name) => (name === 'aggregate' ? aggregate : Reflect.get(target, name, target)) });
    for (const view of ['all', 'merged'] as const) {
      const whole = await report({ view });
      const folded = await coverageReport(streamed, { userId: U, window: { start: null, end: null }, view });
      expect(folded).toEqual(whole);
      expect(folded.days.length).toBeGreaterThan(0);
    }
  });
});
