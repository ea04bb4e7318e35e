import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NormalizedRecord, RecordKind } from '../../../commands/ingestion/records.js';
import { categorySamplesProjection } from '../../../projections/records/categorySamplesProjection.js';
import { dailySummariesProjection } from '../../../projections/records/dailySummariesProjection.js';
import { sleepProjection } from '../../../projections/records/sleepProjection.js';
import { workoutsProjection } from '../../../projections/records/workoutsProjection.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import { categoryMergeRule, dailyMergeRule, sleepMergeRule, workoutMergeRule } from '../../../src/merge/kindMergeRules.js';
import { recordsMatch } from '../../../src/merge/matchRules.js';
import type { MergeRule } from '../../../src/merge/sampleMergeRule.js';
import { compareStreams, type SourcePriorities } from '../../../src/merge/sourceRanking.js';
import type { Projection } from '../../../src/projector/projection.js';
import type { ReadStore } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../support/tmp.js';
import { category, daily, sleepSession, workout } from './fixtures.js';
import { ingested, project, sequenceOf, USER, userEventAt } from './harness.js';

/**
 * Spec "Merged view" for the kinds besides samples: the flag each record projection keeps equals
 * a brute-force comparison of every pair of records, after ingestion, a priorities change,
 * records sent again (moved), a provider's erasure and a rebuild.
 */
const STREAMS = [
  { provider: 'device-a', source: 'apple', body_worn: true },
  { provider: 'device-a', source: 'oura', body_worn: true },
  { provider: 'device-b', source: 'garmin', body_worn: false },
  { provider: 'device-b', source: 'apple', body_worn: false },
] as const;
const SOURCES = ['apple', 'garmin', 'oura', 'polar'];
const BASE = Date.parse('2026-03-27T00:00:00Z');
const MIN = 60_000;
const DAY = 86_400_000;

type Raw = { key: string; stream: number; start: number; minutes: number; variant: number };

type Kind = {
  name: string;
  projection: Projection;
  collection: string;
  kind: RecordKind;
  record: (r: Raw) => NormalizedRecord;
  interval: (r: Raw) => { start: number; end: number };
  partition: (r: Raw) => string;
  rule: (r: Raw, p: SourcePriorities) => MergeRule;
  /** Contracts §15: the record is flagged implausible (a sleep session over 16 h, a workout over 24 h) and left out. */
  excluded: (r: Raw) => boolean;
};

const iso = (ms: number) => new Date(ms).toISOString();
const CATEGORY_TYPES = ['sleep_analysis', 'mindful_session'];
const dayOf = (r: Raw) => iso(BASE + Math.floor((r.start - BASE) / DAY) * DAY).slice(0, 10);

const KINDS: Kind[] = [
  {
    name: 'sleep sessions',
    projection: sleepProjection,
    collection: 'sleep_sessions',
    kind: 'sleep_session',
    record: (r) => sleepSession({ external_id: r.key, bedtime_start: iso(r.start), bedtime_end: iso(r.start + r.minutes * MIN), phases: [], ...STREAMS[r.stream]!, device: null }),
    interval: (r) => ({ start: r.start, end: r.start + r.minutes * MIN }),
    partition: () => '',
    rule: (_, p) => sleepMergeRule(p),
    excluded: (r) => r.minutes > 16 * 60,
  },
  {
    name: 'workouts',
    projection: workoutsProjection,
    collection: 'workouts',
    kind: 'workout',
    record: (r) => workout({ external_id: r.key, type: r.variant % 2 ? 'running' : 'cycling', start_date: iso(r.start), end_date: iso(r.start + r.minutes * MIN), route: [], ...STREAMS[r.stream]!, device: null }),
    interval: (r) => ({ start: r.start, end: r.start + r.minutes * MIN }),
    partition: () => '',
    rule: (_, p) => workoutMergeRule(p),
    excluded: (r) => r.minutes > 24 * 60,
  },
  {
    name: 'category samples',
    projection: categorySamplesProjection,
    collection: 'category_samples',
    kind: 'category',
    record: (r) => category({ external_id: r.key, type: CATEGORY_TYPES[r.variant % 2]!, start_date: iso(r.start), end_date: iso(r.start + r.minutes * MIN), ...STREAMS[r.stream]!, device: null }),
    interval: (r) => ({ start: r.start, end: r.start + r.minutes * MIN }),
    partition: (r) => CATEGORY_TYPES[r.variant % 2]!,
    rule: (r, p) => categoryMergeRule(CATEGORY_TYPES[r.variant % 2]!, p),
    excluded: () => false,
  },
  {
    name: 'daily summaries',
    projection: dailySummariesProjection,
    collection: 'daily_summaries',
    kind: 'daily_summary',
    record: (r) => daily({ external_id: r.key, date: dayOf(r), ...STREAMS[r.stream]!, device: null }),
    interval: (r) => {
      const start = Date.parse(`${dayOf(r)}T00:00:00Z`);
      return { start, end: start + DAY };
    },
    partition: () => '',
    rule: (_, p) => dailyMergeRule(p),
    excluded: () => false,
  },
];

const rawArb = fc.record({
  stream: fc.integer({ min: 0, max: STREAMS.length - 1 }),
  start: fc.integer({ min: 0, max: (6 * 24 * 60) / 15 - 1 }).map((i) => BASE + i * 15 * MIN),
  // Up to the longest a session or category sample may span (48 h, src/catalog/intervalBounds.ts).
  minutes: fc.constantFrom(15, 30, 60, 120, 480, 600, 2160, 2880),
  variant: fc.nat(3),
});
const prioritiesArb: fc.Arbitrary<SourcePriorities> = fc.dictionary(fc.constantFrom('sleep', 'workouts', 'sleep_analysis', 'activity', '*'), fc.shuffledSubarray(SOURCES, { minLength: 1 }), { maxKeys: 3 });

let position = 0;
const userEvent = (type: string, data: Record<string, unknown>): RecordedEvent => userEventAt(++position, type, data);

function events(k: Kind, raws: readonly Raw[]): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (let s = 0; s < STREAMS.length; s++) {
    const mine = raws.filter((r) => r.stream === s);
    if (mine.length) out.push(ingested(k.kind, ++position, mine.map(k.record), { provider: STREAMS[s]!.provider }));
  }
  return out;
}

const current = (history: readonly Raw[]): Raw[] => [...new Map(history.map((r) => [`${STREAMS[r.stream]!.provider}\u0000${r.key}`, r])).values()];

async function check(k: Kind, store: ReadStore, raws: readonly Raw[], p: SourcePriorities): Promise<void> {
  const expected: Record<string, boolean> = {};
  for (const r of raws) {
    const rule = k.rule(r, p);
    expected[`${STREAMS[r.stream]!.provider}/${r.key}`] =
      k.excluded(r) ||
      raws.some(
        (n) =>
          n !== r &&
          !k.excluded(n) &&
          k.partition(n) === k.partition(r) &&
          compareStreams(STREAMS[n.stream]!, STREAMS[r.stream]!, rule.order) < 0 &&
          recordsMatch(rule.rule, k.interval(r), k.interval(n)),
      );
  }
  const rows = await store.find(k.collection, { filter: { user_id: USER }, fields: ['provider', 'external_id', 'hidden'] });
  expect(Object.fromEntries(rows.map((d) => [`${d.provider}/${d.external_id}`, d.hidden === true]))).toEqual(expected);
}

let stores = 0;
async function freshStore(k: Kind): Promise<ReadStore> {
  const store = new SqliteReadStore({ path: join(tempDir('wellstream-prop-'), `kinds-${++stores}.db`) });
  await store.ensureCollections(k.projection.collections);
  return store;
}

describe('merged flags of category samples, sleep sessions, workouts and daily summaries (Merged view; contracts §15: implausibly long sessions and workouts left out)', () => {
  it.each(KINDS)('$name: equal a brute-force comparison after ingestion, a priorities change, records sent again, a provider’s erasure and a rebuild', async (k) => {
    await fc.assert(
      fc.asyncProperty(fc.array(rawArb, { minLength: 1, maxLength: 25 }), prioritiesArb, prioritiesArb, fc.array(fc.nat(), { maxLength: 5 }), async (first, p1, p2, resend) => {
        let n = 0;
        let history: Raw[] = first.map((r) => ({ ...r, key: `r${n++}` }));
        const store = await freshStore(k);
        const log: RecordedEvent[] = [];
        const apply = async (es: RecordedEvent[]) => {
          log.push(...es);
          await project(store, k.projection, es);
        };
        await apply([userEvent('source_priorities.set', { priorities: p1, at: 'x', by: 'test' })]);
        await apply(events(k, history));
        await check(k, store, current(history), p1);
        await apply([userEvent('source_priorities.set', { priorities: p2, at: 'x', by: 'test' })]);
        await check(k, store, current(history), p2);
        const again = resend.map((i, j) => ({ ...history[i % history.length]!, start: history[i % history.length]!.start + [15, -60, 24 * 60][j % 3]! * MIN }));
        await apply(events(k, again));
        history = [...history, ...again];
        await check(k, store, current(history), p2);
        await apply([userEvent('provider_data.erased', { provider: 'device-b', job_id: 'j', erased_at: 'x' })]);
        history = history.filter((r) => STREAMS[r.stream]!.provider !== 'device-b');
        await check(k, store, current(history), p2);

        const fresh = await freshStore(k);
        for (const e of log) await fresh.applyChanges(k.projection.evolve(e, sequenceOf(k.projection, e)));
        for await (const chunk of k.projection.derive!.rebuildAll(fresh)) await fresh.applyChanges(chunk);
        await check(k, fresh, current(history), p2);
        await fresh.close();
        await store.close();
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
