import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QuantityRecord } from '../../../../commands/ingestion/records.js';
import { BLOCK_SAMPLES, decodeBlock, locatorId, SAMPLE_BLOCKS, type SampleBlockDoc, type SampleKeyDoc } from '../../../../projections/records/sampleBlocks/sampleBlock.js';
import { storedLocators } from '../../../../projections/records/sampleBlocks/recentLocators.js';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import { SAMPLE_ROLLUPS } from '../../../../projections/records/sampleRollups/dayRollup.js';
import { SAMPLE_SOURCE_ORDERS } from '../../../../projections/records/sampleRollups/samplesDerivation.js';
import type { RecordedEvent } from '../../../../src/eventstore/eventStore.js';
import type { SourcePriorities } from '../../../../src/merge/sourceRanking.js';
import type { Projection } from '../../../../src/projector/projection.js';
import type { ReadStore } from '../../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../../support/tmp.js';
import { drawnQuantity, ingested, project, rebuildInto, storedSamples, USER, userEventAt } from '../harness.js';
import { logicalState } from './blockStoreHarness.js';
import { perSampleProjection } from './perSampleModel.js';

/**
 * Issue 38: samples stored as blocks keep exactly what one row per sample kept. For random
 * multi-source data (overlaps, gaps, priorities, implausible values flagged, records sent again
 * and moved, one provider erased, two users), the block model (samplesProjection) and the
 * per-sample model it replaced (perSampleModel.ts, the oracle) store the same samples with every
 * field, the same merged flags (spec "Merged view") and the same statistics rollups; a rebuild
 * from the log stores exactly what the live projection stored; every locator names the block
 * that holds its sample.
 */
const STREAMS = [
  { provider: 'device-a', source: 'apple', body_worn: true, device: 'Apple Watch (Watch7,1)' },
  { provider: 'device-a', source: 'apple', body_worn: false, device: null },
  { provider: 'device-b', source: 'garmin', body_worn: true, device: 'Forerunner 965' },
  { provider: 'device-b', source: 'samsung', body_worn: false, device: null },
] as const;
const TYPES = ['heart_rate', 'step_count', 'body_mass'] as const;
const SOURCES = ['apple', 'garmin', 'samsung'];
const OTHER_USER = '00000000-0000-4000-8000-0000000000cc';
const BASE = Date.parse('2026-03-27T00:00:00Z');
const MIN = 60_000;
const DAYS = 6;

type Raw = { key: string; user: 0 | 1; stream: number; type: (typeof TYPES)[number]; start: number; minutes: number; value: number; meta: boolean };

const rawArb = fc.record({
  user: fc.constantFrom<0 | 1>(0, 0, 0, 1),
  stream: fc.integer({ min: 0, max: STREAMS.length - 1 }),
  type: fc.constantFrom(...TYPES),
  start: fc.oneof(fc.integer({ min: 0, max: (DAYS * 24 * 60) / 5 - 1 }).map((i) => BASE + i * 5 * MIN), fc.integer({ min: 0, max: DAYS * 24 * 60 - 1 }).map((i) => BASE + i * MIN + 30_123)),
  minutes: fc.constantFrom(0, 1, 5, 240, 1440, 2160),
  // Heart rates under 20 are implausible: flagged and left out (contracts §15).
  value: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0.5, max: 150, noNaN: true })),
  meta: fc.boolean(),
});
const prioritiesArb: fc.Arbitrary<SourcePriorities> = fc.dictionary(fc.constantFrom('heart_rate', 'activity', 'body', '*'), fc.shuffledSubarray(SOURCES, { minLength: 1 }), { maxKeys: 3 });

const record = (r: Raw): QuantityRecord =>
  drawnQuantity(r, { ...STREAMS[r.stream]!, metadata: r.meta ? { HKTimeZone: 'Europe/Berlin', original_value: r.value } : {}, source_name: r.meta ? 'Apple Watch' : null });

let position = 0;
/** Records of one user and stream per event, as the ETL appends them. */
function events(raws: readonly Raw[]): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (const user of [0, 1] as const) {
    for (let s = 0; s < STREAMS.length; s++) {
      const mine = raws.filter((r) => r.stream === s && r.user === user);
      if (mine.length) out.push(ingested('quantity', ++position, mine.map(record), { provider: STREAMS[s]!.provider, user_id: user === 0 ? USER : OTHER_USER }));
    }
  }
  return out;
}
const userEvent = (type: string, data: Record<string, unknown>): RecordedEvent => userEventAt(++position, type, data);
const prioritiesSet = (priorities: SourcePriorities) => userEvent('source_priorities.set', { priorities, at: '2026-11-04T00:00:00.000Z', by: 'test' });
const providerErased = (provider: string) => userEvent('provider_data.erased', { provider, job_id: 'job-1', erased_at: '2026-11-05T00:00:00.000Z' });

let stores = 0;
async function storeFor(p: Projection): Promise<ReadStore> {
  const store = new SqliteReadStore({ path: join(tempDir('wellstream-blocks-'), `read-${++stores}.db`) });
  await store.ensureCollections(p.collections);
  return store;
}
const all = (store: ReadStore, collection: string) => store.find(collection, { sort: [['_id', 1]] });

/** The block model holds what the per-sample model holds: every sample with every field and flag, the rollups, the source orders. */
async function expectSameState(blocks: ReadStore, rows: ReadStore, when: string): Promise<void> {
  expect(await storedSamples(blocks), `${when}: samples`).toEqual(await all(rows, 'samples'));
  expect(await all(blocks, SAMPLE_ROLLUPS), `${when}: rollups`).toEqual(await all(rows, SAMPLE_ROLLUPS));
  expect(await all(blocks, SAMPLE_SOURCE_ORDERS), `${when}: source orders`).toEqual(await all(rows, SAMPLE_SOURCE_ORDERS));
}

/** Blocks keep their bounds (docs/sample-blocks.md) and every locator names the block holding its sample, with its id. */
async function expectConsistentBlocks(store: ReadStore): Promise<void> {
  const blocks = (await all(store, SAMPLE_BLOCKS)) as SampleBlockDoc[];
  const holder = new Map<string, { block: string; id: number; user: string; provider: string }>();
  for (const b of blocks) {
    const samples = decodeBlock(b.data);
    expect(samples.length).toBe(b.count);
    expect(b.count).toBeGreaterThan(0);
    expect(b.count).toBeLessThanOrEqual(BLOCK_SAMPLES);
    expect(b.listed, 'listed: the samples the merged view lists').toBe(samples.filter((s) => s.hidden !== true).length);
    expect([b.start_min, b.start_max]).toEqual([samples[0]!.start_date, samples[samples.length - 1]!.start_date]);
    for (const s of samples) {
      expect([s.user_id, s.type, s.provider, s.source, s.day, s.tenant_id]).toEqual([b.user_id, b.type, b.provider, b.source, b.day, b.tenant_id]);
      // A locator names the block's family, its `_id` without the cut's `.n` (packedLocators.ts).
      holder.set(s._id, { block: b._id.slice(0, b._id.lastIndexOf('.')), id: s.id, user: s.user_id, provider: s.provider });
    }
  }
  // Main's locators and the recent tier's as one set (storedLocators).
  const keys: SampleKeyDoc[] = [];
  for await (const k of storedLocators(store)) keys.push(k);
  // A locator's `_id` is its user's tag and the record key's first characters (locatorId).
  const expected = Object.fromEntries([...holder].map(([key, h]) => [locatorId(h.user, key), { block: h.block, id: h.id, provider: h.provider }]));
  expect(Object.fromEntries(keys.map((k) => [k._id, { block: k.block, id: k.id, provider: k.provider }]))).toEqual(expected);
}

describe('samples stored as blocks equal the per-sample model (issue 38; spec "Merged view", "Sample statistics"; contracts §15)', () => {
  it('after ingestion, a priorities change, records sent again, a provider’s erasure, and after a rebuild', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rawArb, { minLength: 1, maxLength: 40 }),
        fc.array(rawArb, { maxLength: 15 }),
        prioritiesArb,
        prioritiesArb,
        fc.array(fc.nat(), { maxLength: 8 }),
        async (first, second, p1, p2, resend) => {
          let n = 0;
          const keyed = (rs: Omit<Raw, 'key'>[]) => rs.map((r) => ({ ...r, key: `r${n++}` }));
          const history = [...keyed(first), ...keyed(second)];
          const blocks = await storeFor(samplesProjection);
          const rows = await storeFor(perSampleProjection);
          const log: RecordedEvent[] = [];
          const apply = async (es: RecordedEvent[], when: string) => {
            log.push(...es);
            await project(blocks, samplesProjection, es);
            await project(rows, perSampleProjection, es);
            await expectSameState(blocks, rows, when);
          };
          await apply([prioritiesSet(p1)], 'priorities');
          await apply(events(history.slice(0, first.length)), 'first upload');
          await apply(events(history.slice(first.length)), 'second upload');
          await apply([prioritiesSet(p2)], 'new priorities');
          // Records sent again by their own stream: moved by minutes to a day (to another block), revalued.
          const again = resend.map((i, j) => {
            const r = history[i % history.length]!;
            return { ...r, start: r.start + [5 * MIN, -5 * MIN, 24 * 60 * MIN, 37 * MIN][j % 4]!, value: r.value + 1, meta: !r.meta };
          });
          await apply(events(again), 'sent again');
          await apply([providerErased('device-b')], 'device-b erased');
          expect((await storedSamples(blocks)).filter((s) => s.user_id === USER && s.provider === 'device-b')).toEqual([]);
          await expectConsistentBlocks(blocks);

          const fresh = await storeFor(samplesProjection);
          await rebuildInto(fresh, samplesProjection, log);
          // The locators as one set: the live store's recent tier and main together (logicalState).
          for (const c of samplesProjection.collections) expect(await logicalState(fresh, c.name), `rebuilt ${c.name}`).toEqual(await logicalState(blocks, c.name));
          await Promise.all([fresh.close(), blocks.close(), rows.close()]);
        },
      ),
      { numRuns: 30 },
    );
  }, 180_000);

  it(`cuts a day of more than ${BLOCK_SAMPLES} samples into blocks in (start, id) order, whatever order and batches they came in, and keeps them equal to the per-sample model`, async () => {
    const raws: Raw[] = [];
    // 2,600 heart rates of one stream on one day, 30 s apart, uploaded as three batches out of time order.
    for (let i = 0; i < 2_600; i++) raws.push({ key: `hr${i}`, user: 0, stream: 0, type: 'heart_rate', start: BASE + i * 30_000, minutes: 0, value: 60 + (i % 50), meta: i % 7 === 0 });
    const batches = [raws.slice(1_700), raws.slice(0, 900), raws.slice(900, 1_700)];
    // Then some sent again, moved inside the day (the blocks after them shift).
    const again = [5, 1_200, 2_599].map((i) => ({ ...raws[i]!, start: raws[i]!.start + 45_000, value: 99 }));
    const blocks = await storeFor(samplesProjection);
    const rows = await storeFor(perSampleProjection);
    const log = [...batches.flatMap(events), ...events(again)];
    await project(blocks, samplesProjection, log);
    await project(rows, perSampleProjection, log);
    await expectSameState(blocks, rows, 'one dense day');
    await expectConsistentBlocks(blocks);
    const stored = (await all(blocks, SAMPLE_BLOCKS)) as SampleBlockDoc[];
    expect(stored.map((b) => b.count)).toEqual([1_000, 1_000, 600]);
    const fresh = await storeFor(samplesProjection);
    await rebuildInto(fresh, samplesProjection, log);
    expect(await all(fresh, SAMPLE_BLOCKS)).toEqual(stored);
    await Promise.all([fresh.close(), blocks.close(), rows.close()]);
  }, 60_000);
});
