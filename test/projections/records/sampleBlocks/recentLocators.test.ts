import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recentTierLimits, RUNS, SAMPLE_KEY_RUNS } from '../../../../projections/records/sampleBlocks/recentLocators.js';
import { isKeyRow, type KeyRowDoc } from '../../../../projections/records/sampleBlocks/packedLocators.js';
import { SAMPLE_BLOCKS, SAMPLE_KEYS, userLocators } from '../../../../projections/records/sampleBlocks/sampleBlock.js';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import { sampleById } from '../../../../queries/records/sampleBlocks.js';
import { recordId } from '../../../../projections/records/recordIds.js';
import type { RecordedEvent } from '../../../../src/eventstore/eventStore.js';
import { deriveBatch, pushChanges } from '../../../../src/projector/batchChanges.js';
import type { PositionedChange, ReadStore } from '../../../../src/readstore/readStore.js';
import { join } from 'node:path';
import { SqliteReadStore } from '../../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../../support/tmp.js';
import { ingested, project, rebuildInto, sequenceOf, storedSamples, TENANT, USER, userEventAt } from '../harness.js';
import { BASE, blockState, hr, MIN, samplesStore } from './blockStoreHarness.js';

/**
 * The samples' locators in two tiers (recentLocators.ts, docs/sample-blocks.md "The locators'
 * recent tier"): a live batch's new and moved locators go to runs, merged into `sample_keys` past a
 * bound. Whatever tier a locator is in, the ingest finds a record sent again, a read by id finds
 * the sample, and an erasure leaves none behind; the two tiers together always equal what a
 * rebuild (which writes `sample_keys` only) stores.
 */
const OTHER = '00000000-0000-4000-8000-0000000000cc';
const DAY = 86_400_000;
const storeFor = () => samplesStore('wellstream-recent-locators-');
const limit = recentTierLimits.locators;
const slices = recentTierLimits.slices;
const mergeFrom = recentTierLimits.mergeFrom;
// Most tests merge in one batch (one slice), whatever its size; the sliced merge and who pays for it have their own tests.
beforeEach(() => {
  recentTierLimits.slices = 1;
  recentTierLimits.mergeFrom = 0;
});
afterEach(() => {
  recentTierLimits.locators = limit;
  recentTierLimits.slices = slices;
  recentTierLimits.mergeFrom = mergeFrom;
});

/** Applies `events` with every locator merged into sample_keys at once (a bound of 0). */
async function projectMerged(store: ReadStore, events: RecordedEvent[]): Promise<void> {
  recentTierLimits.locators = 0;
  try {
    await project(store, samplesProjection, events);
  } finally {
    recentTierLimits.locators = limit;
  }
}

/** How many locators main's key rows hold (of the user, and of the provider when given): packedLocators.ts. */
async function mainOf(store: ReadStore, userId = USER, provider?: string): Promise<number> {
  let n = 0;
  for (const row of await store.find<KeyRowDoc>(SAMPLE_KEYS, { filter: { ...userLocators(userId), ...(provider ? { provider } : {}) } })) if (isKeyRow(row._id)) n += row.n;
  return n;
}
/** The runs (of the user): the tier's rows but its mark. */
const runsOf = (store: ReadStore, filter: Record<string, string> = { user_id: USER }) => store.count(SAMPLE_KEY_RUNS, { ...filter, ...RUNS });

/**
 * The state a rebuild of `log` stores, as `store`'s must be (blockState: the locators of both tiers
 * as one set). A rebuild's replay goes through the tier too (h19/locators: main's key rows are
 * written by merges only), so how it splits them is not compared.
 */
async function expectRebuiltEqual(store: ReadStore, log: RecordedEvent[]): Promise<void> {
  const fresh = await storeFor();
  await rebuildInto(fresh, samplesProjection, log);
  expect(await blockState(store)).toEqual(await blockState(fresh));
  await fresh.close();
}

/**
 * The state of `log` applied batch by batch with every locator in main (a bound of 0: what the
 * projection stored before the tier). The erasure tests compare with this, not with a rebuild: a
 * rebuild's chunk holding a user's erasure drops that user's records later in the chunk (the batch
 * rule of docs/sample-blocks.md), which a live batch of their own keeps.
 */
async function expectMainOnlyEqual(store: ReadStore, log: RecordedEvent[]): Promise<void> {
  const oracle = await storeFor();
  await projectMerged(oracle, log);
  expect(await runsOf(oracle, {})).toBe(0);
  expect(await blockState(store)).toEqual(await blockState(oracle));
  await oracle.close();
}

const erasedUser = (position: number, userId: string): RecordedEvent => ({
  ...userEventAt(position, 'user.erased', { job_id: 'del-1', erased_at: '2026-11-05T00:00:00.000Z' }),
  data: { user_id: userId, tenant_id: TENANT, job_id: 'del-1', erased_at: '2026-11-05T00:00:00.000Z' },
});

describe("the samples' locators in a recent tier and main (issue 38)", () => {
  it('a record sent again is found in the recent tier and in main: it leaves its old block and keeps its first id', async () => {
    const store = await storeFor();
    const first = ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61), hr('b', BASE + 20 * MIN, 62)]);
    const second = ingested('quantity', 2, [hr('c', BASE + 30 * MIN, 63)]);
    await projectMerged(store, [first]);
    await project(store, samplesProjection, [second]);
    expect([await mainOf(store), await runsOf(store)]).toEqual([2, 1]);

    // `a`'s locator is in main, `c`'s in a run: both move to the next day's block.
    const again = ingested('quantity', 3, [hr('a', BASE + DAY + 10 * MIN, 71), hr('c', BASE + DAY + 30 * MIN, 73)]);
    await project(store, samplesProjection, [again]);
    const samples = await storedSamples(store);
    expect(samples).toHaveLength(3);
    const byKey = Object.fromEntries(samples.map((s) => [s.external_id, s]));
    expect([byKey.a!.id, byKey.b!.id, byKey.c!.id]).toEqual([recordId(1, 0), recordId(1, 1), recordId(2, 0)]);
    expect([byKey.a!.value, byKey.c!.value]).toEqual([71, 73]);
    expect([byKey.a!.day, byKey.c!.day]).toEqual(['2026-03-28', '2026-03-28']);
    await expectRebuiltEqual(store, [first, second, again]);
    await store.close();
  });

  it('past its bound the tier is merged into main in one pass: no run left, the same locators as before, a moved one naming its new block', async () => {
    recentTierLimits.locators = 2;
    const store = await storeFor();
    const first = ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61), hr('b', BASE + 20 * MIN, 62)]);
    await project(store, samplesProjection, [first]);
    expect([await mainOf(store), await runsOf(store)]).toEqual([0, 1]);
    // 2 in the tier and `c` pass 2: everything goes to main. `a` moved to another day's block: its
    // key and id stay (no new locator in the tier), its id row names the new block family.
    const second = ingested('quantity', 2, [hr('a', BASE + DAY + 10 * MIN, 71), hr('c', BASE + 30 * MIN, 63)]);
    await project(store, samplesProjection, [second]);
    expect([await mainOf(store), await runsOf(store, {})]).toEqual([3, 0]);
    await expectRebuiltEqual(store, [first, second]);
    // The tier starts again after the merge.
    const third = ingested('quantity', 3, [hr('d', BASE + 40 * MIN, 64)]);
    await project(store, samplesProjection, [third]);
    expect([await mainOf(store), await runsOf(store)]).toEqual([3, 1]);
    await expectRebuiltEqual(store, [first, second, third]);
    await store.close();
  });

  it('a merge spread over slices keeps every locator found: the runs go only once every slice is in main, and a record moved meanwhile is found where it went', async () => {
    recentTierLimits.locators = 10;
    recentTierLimits.slices = 4;
    const store = await storeFor();
    const recs = 'abcdefghijklmnop'.split('').map((k, i) => hr(k, BASE + (i + 1) * MIN, 60 + i));
    const events = [ingested('quantity', 1, recs.slice(0, 8)), ingested('quantity', 2, recs.slice(8))];
    await project(store, samplesProjection, [events[0]!]);
    expect([await mainOf(store), await runsOf(store)]).toEqual([0, 1]);
    // The second batch passes the bound: the merge's first slice (of 4) goes to main, the runs stay.
    await project(store, samplesProjection, [events[1]!]);
    expect(await mainOf(store)).toBeLessThan(16);
    expect(await runsOf(store)).toBe(2);
    await expectRebuiltEqual(store, events);
    // While the merge is under way `a` moves to another day; `q`, `r`, `s` are new. Each batch merges one slice.
    events.push(ingested('quantity', 3, [hr('a', BASE + DAY + 5 * MIN, 90), hr('q', BASE + 20 * MIN, 91)]));
    events.push(ingested('quantity', 4, [hr('r', BASE + 21 * MIN, 92)]));
    events.push(ingested('quantity', 5, [hr('s', BASE + 22 * MIN, 93)]));
    for (let i = 2; i < 4; i++) {
      await project(store, samplesProjection, [events[i]!]);
      expect(await runsOf(store), `after batch ${i + 1}: the merge is not done`).toBe(i + 1);
      await expectRebuiltEqual(store, events.slice(0, i + 1));
    }
    await project(store, samplesProjection, [events[4]!]);
    // Every slice done: the merge's two runs deleted; the three written meanwhile (`q`, `r`, `s`) stay.
    expect(await runsOf(store)).toBe(3);
    expect(await mainOf(store)).toBeGreaterThanOrEqual(16);
    await expectRebuiltEqual(store, events);
    const byKey = Object.fromEntries((await storedSamples(store)).map((s) => [s.external_id, s]));
    expect(byKey.a!.day).toBe('2026-03-28');
    await store.close();
  });

  it("a merge's slices are paid by the batches that filled the tier, not by another user's one-line upload; small batches alone merge past twice the bound", async () => {
    recentTierLimits.locators = 10;
    recentTierLimits.slices = 4;
    recentTierLimits.mergeFrom = 5;
    const store = await storeFor();
    const recs = (from: number, n: number) => Array.from({ length: n }, (_, i) => hr(`k${from + i}`, BASE + (from + i + 1) * MIN, 60));
    const events = [ingested('quantity', 1, recs(0, 8)), ingested('quantity', 2, recs(8, 8))];
    await project(store, samplesProjection, [events[0]!]);
    // The bulk batch that passes the bound merges the first slice.
    await project(store, samplesProjection, [events[1]!]);
    const first = await mainOf(store);
    expect(first).toBeGreaterThan(0);
    // Another user's one-line upload comes next: it merges nothing.
    events.push(ingested('quantity', 3, [hr('one-line', BASE + 30 * MIN, 70)], { user_id: OTHER }));
    await project(store, samplesProjection, [events[2]!]);
    expect(await mainOf(store)).toBe(first);
    expect(await mainOf(store, OTHER)).toBe(0);
    await expectRebuiltEqual(store, events);
    // The bulk import's next batch merges the next slice.
    events.push(ingested('quantity', 4, recs(16, 5)));
    await project(store, samplesProjection, [events[3]!]);
    expect(await mainOf(store)).toBeGreaterThan(first);
    await expectRebuiltEqual(store, events);
    await store.close();

    // Small batches only: none merges while the tier holds up to twice its bound; past it, they do.
    recentTierLimits.mergeFrom = 100;
    const small = await storeFor();
    const log = [ingested('quantity', 1, recs(0, 8)), ingested('quantity', 2, recs(8, 8)), ingested('quantity', 3, recs(16, 8))];
    await project(small, samplesProjection, [log[0]!]);
    await project(small, samplesProjection, [log[1]!]);
    expect(await mainOf(small)).toBe(0);
    await project(small, samplesProjection, [log[2]!]);
    expect(await mainOf(small)).toBeGreaterThan(0);
    await expectRebuiltEqual(small, log);
    await small.close();
  });

  it('a read by id finds a sample whose locator is in main, one in the recent tier, and one moved while in the tier', async () => {
    const store = await storeFor();
    const first = ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61)]);
    await projectMerged(store, [first]);
    await project(store, samplesProjection, [ingested('quantity', 2, [hr('b', BASE + 20 * MIN, 62), hr('c', BASE + 30 * MIN, 63)])]);
    await project(store, samplesProjection, [ingested('quantity', 3, [hr('c', BASE + 2 * DAY, 73)])]);
    // `c` moved: its key and id stay in their run, its id row names its new block family.
    expect([await mainOf(store), await runsOf(store)]).toEqual([1, 1]);
    expect((await sampleById(store, USER, recordId(1, 0)))?.value).toBe(61);
    expect((await sampleById(store, USER, recordId(2, 0)))?.value).toBe(62);
    const moved = await sampleById(store, USER, recordId(2, 1));
    expect([moved?.value, moved?.day]).toEqual([73, '2026-03-29']);
    expect(await sampleById(store, OTHER, recordId(2, 0))).toBeNull();
    expect(await sampleById(store, USER, recordId(3, 0))).toBeNull();
    await store.close();
  });

  it('a read by id finds a sample in any block of a day cut into more blocks than it reads at once (docs/sample-blocks.md)', async () => {
    const store = await storeFor();
    // 6,000 samples ten seconds apart: one day of one series, six blocks of one family.
    const events = Array.from({ length: 6 }, (_, e) => ingested('quantity', e + 1, Array.from({ length: 1000 }, (_, i) => hr(`d${e}-${i}`, BASE + (e * 1000 + i) * 10_000, 40 + ((e + i) % 100)))));
    await project(store, samplesProjection, events);
    expect(await store.count(SAMPLE_BLOCKS, { user_id: USER })).toBe(6);
    for (const [e, i] of [[0, 0], [3, 500], [5, 999]] as const) expect((await sampleById(store, USER, recordId(e + 1, i)))?.value).toBe(40 + ((e + i) % 100));
    expect(await sampleById(store, USER, recordId(6, 1000))).toBeNull();
    expect(await sampleById(store, OTHER, recordId(6, 999))).toBeNull();
    await store.close();
  });

  it("erasing a user deletes their locators in both tiers and nobody else's; their records sent again take new ids", async () => {
    const store = await storeFor();
    const log: RecordedEvent[] = [
      ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61)]),
      ingested('quantity', 2, [hr('a', BASE + 10 * MIN, 61)], { user_id: OTHER }),
    ];
    await projectMerged(store, log);
    const recent = [ingested('quantity', 3, [hr('b', BASE + 20 * MIN, 62)]), ingested('quantity', 4, [hr('b', BASE + 20 * MIN, 62)], { user_id: OTHER })];
    await project(store, samplesProjection, recent);
    log.push(...recent);
    for (const u of [USER, OTHER]) expect([await mainOf(store, u), await runsOf(store, { user_id: u })], u).toEqual([1, 1]);

    const erasure = erasedUser(5, USER);
    await project(store, samplesProjection, [erasure]);
    log.push(erasure);
    expect([await mainOf(store), await runsOf(store)]).toEqual([0, 0]);
    expect([await mainOf(store, OTHER), await runsOf(store, { user_id: OTHER })]).toEqual([1, 1]);
    // Sent again, the user's records are new: no locator kept in memory gives them their old ids.
    const resent = ingested('quantity', 6, [hr('a', BASE + 10 * MIN, 61), hr('b', BASE + 20 * MIN, 62)]);
    await project(store, samplesProjection, [resent]);
    log.push(resent);
    expect((await storedSamples(store)).filter((s) => s.user_id === USER).map((s) => s.id).sort()).toEqual([recordId(6, 0), recordId(6, 1)].sort());
    await expectMainOnlyEqual(store, log);
    await store.close();
  });

  it("erasing a provider deletes its locators in both tiers and keeps the user's other provider's", async () => {
    const store = await storeFor();
    const b = (key: string, start: number, value: number) => ({ ...hr(key, start, value), provider: 'device-b' });
    const log: RecordedEvent[] = [ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61)]), ingested('quantity', 2, [b('a', BASE + 11 * MIN, 61)], { provider: 'device-b' })];
    await projectMerged(store, log);
    const recent = [ingested('quantity', 3, [hr('b', BASE + 20 * MIN, 62)]), ingested('quantity', 4, [b('b', BASE + 21 * MIN, 62)], { provider: 'device-b' })];
    await project(store, samplesProjection, recent);
    log.push(...recent);
    const ofProvider = async (provider: string) => [await mainOf(store, USER, provider), await runsOf(store, { user_id: USER, provider })];
    expect([await ofProvider('device-a'), await ofProvider('device-b')]).toEqual([[1, 1], [1, 1]]);

    const erasure = userEventAt(5, 'provider_data.erased', { provider: 'device-b', job_id: 'job-1', erased_at: '2026-11-05T00:00:00.000Z' });
    await project(store, samplesProjection, [erasure]);
    log.push(erasure);
    expect([await ofProvider('device-a'), await ofProvider('device-b')]).toEqual([[1, 1], [0, 0]]);
    // Sent again, the provider's records are new (one was in main, one in a run).
    const resent = ingested('quantity', 6, [b('a', BASE + 12 * MIN, 65), b('b', BASE + 22 * MIN, 66)], { provider: 'device-b' });
    await project(store, samplesProjection, [resent]);
    log.push(resent);
    expect((await storedSamples(store)).filter((s) => s.provider === 'device-b').map((s) => s.id).sort()).toEqual([recordId(6, 0), recordId(6, 1)].sort());
    await expectMainOnlyEqual(store, log);
    await store.close();
  });

  it('a batch that failed after its derivation (a merge too) leaves the tier as the store holds it: the next batch does not find what it wrote', async () => {
    for (const merging of [false, true]) {
      const first = ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61), hr('b', BASE + 20 * MIN, 62)]);
      // `x` gets id (2, 1) in the lost batch and (2, 0) in the one applied instead.
      const lost = ingested('quantity', 2, [hr('a', BASE + DAY, 71), hr('x', BASE + 2 * DAY, 70)]);
      const next = ingested('quantity', 2, [hr('x', BASE + 25 * MIN, 50), hr('b', BASE + 3 * DAY, 72)]);
      const expected = await storeFor();
      await project(expected, samplesProjection, [first, next]);

      const store = await storeFor();
      await project(store, samplesProjection, [first]);
      // `first`'s 2 and the lost batch's new `x` pass 2 (the moved `a` keeps its key and id: no new locator).
      if (merging) recentTierLimits.locators = 2;
      const changes: PositionedChange[] = [];
      pushChanges(samplesProjection, lost, changes, sequenceOf(samplesProjection, lost));
      await deriveBatch(store, samplesProjection.derive!, [lost], changes, async () => {});
      expect(changes.some((c) => c.collection === SAMPLE_KEYS && c.op === 'put' && isKeyRow(c.doc._id)), 'the lost batch merged').toBe(merging);
      recentTierLimits.locators = limit;
      // Never applied; the next batch runs against the store as it was.
      await project(store, samplesProjection, [next]);
      expect(await blockState(store), merging ? 'after a lost merge' : 'after a lost batch').toEqual(await blockState(expected));
      expect((await storedSamples(store)).find((s) => s.external_id === 'x')?.id).toBe(recordId(2, 0));
      await Promise.all([store.close(), expected.close()]);
    }
  });

  it('a record whose locator another writer put into sample_keys (a rebuild, another process merging) is looked up there: the filter of main is built again', async () => {
    const path = join(tempDir('wellstream-recent-locators-'), 'shared.db');
    const a = new SqliteReadStore({ path });
    await a.ensureCollections(samplesProjection.collections);
    const first = ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61)]);
    await project(a, samplesProjection, [first]);
    // A rebuild through another connection writes `b` into main (and `a`, which was a run).
    const second = ingested('quantity', 2, [hr('b', BASE + 20 * MIN, 62)]);
    const rebuilt = new SqliteReadStore({ path });
    await rebuilt.dropCollections(samplesProjection.collections.map((c) => c.name));
    await rebuilt.ensureCollections(samplesProjection.collections);
    await rebuildInto(rebuilt, samplesProjection, [first, second]);
    const third = ingested('quantity', 3, [hr('b', BASE + DAY, 72)]);
    await project(a, samplesProjection, [third]);
    const ids = async () => (await storedSamples(a)).map((s) => [s.external_id, s.id, s.value]).sort((x, y) => (x[0]! < y[0]! ? -1 : 1));
    expect(await ids()).toEqual([['a', recordId(1, 0), 61], ['b', recordId(2, 0), 72]]);

    // Another connection (a process that took the lease over) merges `c` into main.
    const other = new SqliteReadStore({ path });
    await projectMerged(other, [ingested('quantity', 4, [hr('c', BASE + 30 * MIN, 63)])]);
    await project(a, samplesProjection, [ingested('quantity', 5, [hr('c', BASE + 2 * DAY, 73)])]);
    expect(await ids()).toEqual([['a', recordId(1, 0), 61], ['b', recordId(2, 0), 72], ['c', recordId(4, 0), 73]]);
    await Promise.all([a.close(), other.close(), rebuilt.close()]);
  });
});
