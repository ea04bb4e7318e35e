import { describe, expect, it } from 'vitest';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import type { RecordedEvent } from '../../../../src/eventstore/eventStore.js';
import type { Change } from '../../../../src/readstore/readStore.js';
import { BASE, blockState, hr, MIN, samplesStore } from './blockStoreHarness.js';
import { ingested, project } from '../harness.js';

/**
 * MongoDB applies a batch change by change (src/readstore/mongoReadStore.ts: no multi-document
 * transaction), so a process killed inside a batch leaves any prefix of its changes stored, and
 * the batch runs again over that state. For every such prefix of a batch that moves samples to
 * another day (to another block) and revalues others, the batch run again stores exactly what
 * it stores in one piece: no copy left in the old block, every id kept (contracts §13: a record
 * sent again updates, never duplicates; docs/sample-blocks.md, "Crashes on MongoDB").
 */
const storeFor = () => samplesStore('wellstream-blocks-replay-');
const state = blockState;

describe('samples as blocks: a batch run again over any prefix of its own changes stores what it stores whole (issue 38; contracts §13)', () => {
  it('records moved to another day and records revalued: one copy each, first ids kept, after every prefix', async () => {
    const first = ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61), hr('b', BASE + 20 * MIN, 62), hr('c', BASE + 30 * MIN, 63), hr('d', BASE + 86_400_000 + 5 * MIN, 64)]);
    // a and b move a day on (into d's block), c is revalued in place, e is new on the first day.
    const again: RecordedEvent = ingested('quantity', 2, [hr('a', BASE + 86_400_000 + 10 * MIN, 71), hr('b', BASE + 86_400_000 + 20 * MIN, 72), hr('c', BASE + 30 * MIN, 73), hr('e', BASE + 40 * MIN, 75)]);

    const whole = await storeFor();
    await project(whole, samplesProjection, [first]);
    const batch: Change[] = await project(whole, samplesProjection, [again]);
    const expected = await state(whole);
    expect(batch.length).toBeGreaterThan(3);

    for (let k = 0; k < batch.length; k++) {
      const store = await storeFor();
      await project(store, samplesProjection, [first]);
      await store.applyChanges(batch.slice(0, k));
      await project(store, samplesProjection, [again]);
      expect(await state(store), `killed after ${k} of ${batch.length} changes`).toEqual(expected);
      await store.close();
    }
    await whole.close();
  }, 60_000);
});
