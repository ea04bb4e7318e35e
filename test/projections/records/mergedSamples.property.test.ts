import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QuantityRecord } from '../../../commands/ingestion/records.js';
import { samplesProjection } from '../../../projections/records/samplesProjection.js';
import { coverageReport } from '../../../queries/records/coverage.js';
import { listSamples } from '../../../queries/records/listSamples.js';
import { bucketSamples, sampleStats, statsWindow, type StatsInterval } from '../../../queries/records/sampleStats.js';
import { findQuantityType } from '../../../src/catalog/quantityCatalog.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import { recordsMatch } from '../../../src/merge/matchRules.js';
import { compareStreams, sourceOrderFor, type SourcePriorities } from '../../../src/merge/sourceRanking.js';
import type { ReadStore } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../support/tmp.js';
import { drawnQuantity, ingested, project, rebuildInto, TENANT, USER } from './harness.js';
import { logicalState } from './sampleBlocks/blockStoreHarness.js';

/**
 * Spec "Merged view", "Sample statistics", "Coverage report"; contracts §6. The samples projection
 * keeps the merged flags and rollups incrementally (a batch re-evaluates only the neighbourhood it
 * touches); here random records, orders and zones are checked against a brute-force computation
 * over the raw records: after ingestion, after a priorities change, after records are sent again
 * (moved, revalued), and after a rebuild.
 */
const STREAMS = [
  { provider: 'device-a', source: 'apple', body_worn: true },
  { provider: 'device-a', source: 'apple', body_worn: false },
  { provider: 'device-b', source: 'garmin', body_worn: true },
  { provider: 'device-b', source: 'samsung', body_worn: false },
  { provider: 'device-b', source: 'apple', body_worn: true },
] as const;
const TYPES = ['heart_rate', 'step_count', 'body_mass'] as const;
const ZONES = ['UTC', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/St_Johns'] as const;
const SOURCES = ['apple', 'garmin', 'samsung', 'oura'];

const BASE = Date.parse('2026-03-27T00:00:00Z');
const MIN = 60_000;
// 2026-03-29: Europe/Berlin springs forward; 2026-04-05: Australia/Lord_Howe falls back 30 minutes.
const DAYS = 10;

type Raw = { key: string; stream: number; type: (typeof TYPES)[number]; start: number; minutes: number; value: number };

// Times on a 5-minute grid make exact ties and exactly-5-minute distances common; the odd
// offsets land anywhere in between.
const startArb = fc.oneof(
  fc.integer({ min: 0, max: (DAYS * 24 * 60) / 5 - 1 }).map((i) => BASE + i * 5 * MIN),
  fc.integer({ min: 0, max: DAYS * 24 * 60 - 1 }).map((i) => BASE + i * MIN + 30_000),
);
const rawArb = fc.record({
  stream: fc.integer({ min: 0, max: STREAMS.length - 1 }),
  type: fc.constantFrom(...TYPES),
  start: startArb,
  // Up to the longest a count may span (36 h, src/catalog/intervalBounds.ts): long counts reach across days.
  minutes: fc.constantFrom(0, 1, 5, 30, 240, 1440, 2160),
  value: fc.integer({ min: 1, max: 200 }),
});
const prioritiesArb: fc.Arbitrary<SourcePriorities> = fc.dictionary(
  fc.constantFrom('heart_rate', 'activity', 'body', '*'),
  fc.shuffledSubarray(SOURCES, { minLength: 1 }),
  { maxKeys: 3 },
);

const record = (r: Raw): QuantityRecord => drawnQuantity(r, { ...STREAMS[r.stream]!, device: null });

let position = 0;
/** Records of one stream per event, as the ETL appends them. */
function events(raws: readonly Raw[]): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (let s = 0; s < STREAMS.length; s++) {
    const mine = raws.filter((r) => r.stream === s);
    if (mine.length) out.push(ingested('quantity', ++position, mine.map(record), { provider: STREAMS[s]!.provider }));
  }
  return out;
}

const prioritiesEvent = (priorities: SourcePriorities): RecordedEvent => ({
  id: `evt-${++position}`,
  type: 'source_priorities.set',
  data: { user_id: USER, tenant_id: TENANT, priorities, at: '2026-11-04T00:00:00.000Z', by: 'test' },
  metadata: {},
  streamName: `user-${USER}`,
  streamRevision: position,
  globalPosition: position,
  createdAt: new Date('2026-11-04T00:00:00.000Z'),
});

const providerErased = (provider: string): RecordedEvent => ({
  ...prioritiesEvent({}),
  type: 'provider_data.erased',
  data: { user_id: USER, tenant_id: TENANT, provider, job_id: 'job-1', erased_at: '2026-11-05T00:00:00.000Z' },
});

/** The raw records as they stand (a record sent again replaces the one with its key; keys are unique per provider). */
const current = (history: readonly Raw[]): Raw[] => [...new Map(history.map((r) => [`${STREAMS[r.stream]!.provider}\u0000${r.key}`, r])).values()];

/** Contracts §15: a value outside its type's plausible range (heart rates under 20 here) is flagged and left out. */
const excludedBrute = (r: Raw): boolean => {
  const [min, max] = findQuantityType(r.type)!.plausible;
  return r.value < min || r.value > max;
};

/**
 * Brute force: a record is listed unless it is flagged implausible or a better ranked stream has a
 * matching record of its type that is not. Every pair of records is compared; what depends on one
 * record alone (flagged or not) or on two streams alone (which ranks better) is worked out once,
 * not once per pair: the DST cases' 5,760 records are 33 million pairs (docs/decisions.md, "The test suite's time").
 */
function listedBrute(raws: readonly Raw[], priorities: SourcePriorities): Set<Raw> {
  const excluded = new Set(raws.filter(excludedBrute));
  const better = new Map<Raw['type'], boolean[][]>();
  const ranksBetter = (type: Raw['type']) => {
    let table = better.get(type);
    if (!table) {
      const order = sourceOrderFor(type, findQuantityType(type)!.group, priorities);
      table = STREAMS.map((n) => STREAMS.map((r) => compareStreams(n, r, order) < 0));
      better.set(type, table);
    }
    return table;
  };
  const listed = new Set<Raw>();
  for (const r of raws) {
    if (excluded.has(r)) continue;
    const t = findQuantityType(r.type)!;
    const better = ranksBetter(r.type);
    const iv = { start: r.start, end: r.start + r.minutes * MIN };
    const hidden = raws.some(
      (n) => n !== r && n.type === r.type && !excluded.has(n) && better[n.stream]![r.stream]! && recordsMatch(t.match, iv, { start: n.start, end: n.start + n.minutes * MIN }),
    );
    if (!hidden) listed.add(r);
  }
  return listed;
}

async function check(store: ReadStore, raws: readonly Raw[], priorities: SourcePriorities, zone: string, interval: StatsInterval): Promise<void> {
  const listed = listedBrute(raws, priorities);
  for (const type of TYPES) {
    const ofType = raws.filter((r) => r.type === type);
    for (const view of ['merged', 'all'] as const) {
      const page = await listSamples(store, { userId: USER, type, window: { start: null, end: null }, view }, { limit: 10_000 });
      const expected = ofType.filter((r) => view === 'all' || listed.has(r)).map((r) => `${STREAMS[r.stream]!.provider}/${r.key}`).sort();
      expect(page.items.map((d) => `${d.provider}/${d.external_id}`).sort(), `${type} ${view} list`).toEqual(expected);
      for (const d of page.items) expect(d.primary, `${type} ${d.external_id} primary`).toBe(listed.has(ofType.find((r) => r.key === d.external_id && STREAMS[r.stream]!.provider === d.provider)!));

      const window = statsWindow('2026-03-26', '2026-04-08', interval, zone);
      const got = await sampleStats(store, { userId: USER, type, window, interval, tz: zone, view });
      // Statistics of both views leave flagged records out (contracts §15).
      const rows = ofType
        .filter((r) => (view === 'all' ? !excludedBrute(r) : listed.has(r)))
        .map((r) => ({ start_date: new Date(r.start).toISOString(), value: r.value, provider: STREAMS[r.stream]!.provider, source: STREAMS[r.stream]!.source, unit: findQuantityType(type)!.unit }));
      expect(got, `${type} ${view} ${interval} stats in ${zone}`).toEqual(bucketSamples(rows, { interval, tz: zone, window }));
    }
  }
  for (const view of ['merged', 'all'] as const) {
    const report = await coverageReport(store, { userId: USER, window: { start: null, end: null }, view }, { collections: [COVERAGE_SAMPLES] });
    expect(report.flagged_records, `coverage ${view} flagged_records (contracts §15)`).toBe(raws.filter(excludedBrute).length);
    const expected = new Map<string, Record<string, number>>();
    for (const r of raws) {
      const k = `${new Date(r.start).toISOString().slice(0, 10)} ${STREAMS[r.stream]!.provider}`;
      const m = expected.get(k) ?? {};
      if (view === 'all' || listed.has(r)) m[r.type] = (m[r.type] ?? 0) + 1;
      expected.set(k, m);
    }
    expect(Object.fromEntries(report.days.map((d) => [`${d.date} ${d.provider}`, d.metrics])), `coverage ${view}`).toEqual(Object.fromEntries(expected));
  }
}

const COVERAGE_SAMPLES = (await import('../../../queries/records/coverage.js')).COVERAGE_COLLECTIONS.find((c) => c.collection === 'samples')!;

let stores = 0;
async function freshStore(): Promise<ReadStore> {
  const store = new SqliteReadStore({ path: join(tempDir('wellstream-prop-'), `read-${++stores}.db`) });
  await store.ensureCollections(samplesProjection.collections);
  return store;
}

/** What `projections rebuild` does (harness.ts rebuildInto). */
async function rebuilt(history: readonly RecordedEvent[]): Promise<ReadStore> {
  const store = await freshStore();
  await rebuildInto(store, samplesProjection, history);
  return store;
}

describe('statistics on days that are not 24 whole UTC hours (Sample statistics; Reads rule 2)', () => {
  it.each([
    ['Europe/Berlin', '2026-03-29'],
    ['Europe/Berlin', '2026-10-25'],
    ['Asia/Kathmandu', '2026-06-01'],
    ['Australia/Lord_Howe', '2026-04-05'],
    ['Australia/Lord_Howe', '2026-10-04'],
    ['America/St_Johns', '2026-03-08'],
  ])('%s on %s equals the brute-force sums of every minute, by day and by hour, in both views', async (zone, day) => {
    const start = Date.parse(`${day}T00:00:00Z`) - 36 * 60 * MIN;
    const raws: Raw[] = [];
    for (let m = 0; m < 72 * 60; m++) {
      raws.push({ key: `a${m}`, stream: 0, type: 'heart_rate', start: start + m * MIN, minutes: 0, value: 50 + (m % 37) });
      if (m % 3 === 0) raws.push({ key: `b${m}`, stream: 3, type: 'heart_rate', start: start + m * MIN + 90_000, minutes: 0, value: 60 + (m % 11) });
    }
    const store = await freshStore();
    await project(store, samplesProjection, events(raws));
    const listed = listedBrute(raws, {});
    for (const interval of ['day', 'hour'] as const) {
      for (const view of ['merged', 'all'] as const) {
        const window = statsWindow(day, new Date(Date.parse(day) + 2 * 86_400_000).toISOString().slice(0, 10), interval, zone);
        const rows = raws
          .filter((r) => view === 'all' || listed.has(r))
          .filter((r) => r.start >= window.start.toMillis() && r.start < window.end.toMillis())
          .map((r) => ({ start_date: new Date(r.start).toISOString(), value: r.value, provider: STREAMS[r.stream]!.provider, source: STREAMS[r.stream]!.source, unit: 'count/min' }));
        expect(await sampleStats(store, { userId: USER, type: 'heart_rate', window, interval, tz: zone, view }), `${interval} ${view}`).toEqual(bucketSamples(rows, { interval, tz: zone, window }));
      }
    }
    await store.close();
  });
});

describe('merged flags, rollups and coverage counters kept by the samples projection (Merged view; Sample statistics; Coverage report; contracts §6, §15 flagged records left out)', () => {
  it('equal a brute-force computation over the raw records after ingestion, a priorities change, records sent again, a provider’s erasure and a rebuild, in every zone', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rawArb, { minLength: 1, maxLength: 40 }),
        fc.array(rawArb, { maxLength: 15 }),
        prioritiesArb,
        prioritiesArb,
        fc.constantFrom(...ZONES),
        fc.constantFrom<StatsInterval>('day', 'hour'),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (first, second, p1, p2, zone, interval, resend) => {
          let n = 0;
          const keyed = (rs: { stream: number; type: Raw['type']; start: number; minutes: number; value: number }[]) => rs.map((r) => ({ ...r, key: `r${n++}` }));
          const a = keyed(first);
          const b = keyed(second);
          const store = await freshStore();
          const log: RecordedEvent[] = [];
          const apply = async (es: RecordedEvent[]) => {
            log.push(...es);
            await project(store, samplesProjection, es);
          };
          await apply([prioritiesEvent(p1)]);
          await apply(events(a));
          await apply(events(b));
          let history = [...a, ...b];
          await check(store, current(history), p1, zone, interval);

          await apply([prioritiesEvent(p2)]);
          await check(store, current(history), p2, zone, interval);

          // Some records sent again by their own stream: moved by a few minutes to a day, revalued.
          const again = resend.map((i, j) => {
            const r = history[i % history.length]!;
            return { ...r, start: r.start + [5 * MIN, -5 * MIN, 24 * 60 * MIN, 37 * MIN][j % 4]!, value: r.value + 1 };
          });
          await apply(events(again));
          history = [...history, ...again];
          await check(store, current(history), p2, zone, interval);

          // One provider's data erased: what its samples hid is listed again.
          await apply([providerErased('device-b')]);
          history = history.filter((r) => STREAMS[r.stream]!.provider !== 'device-b');
          await check(store, current(history), p2, zone, interval);

          const fresh = await rebuilt(log);
          await check(fresh, current(history), p2, zone, interval);
          // The rebuild stores exactly what the live projection stored, flags and rollups alike.
          // The locators as one set: the live store's recent tier and main together (logicalState).
          for (const c of samplesProjection.collections) expect(await logicalState(fresh, c.name), c.name).toEqual(await logicalState(store, c.name));
          await fresh.close();
          await store.close();
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
