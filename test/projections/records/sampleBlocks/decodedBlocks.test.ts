import { describe, expect, it } from 'vitest';
import { DecodedBlocks } from '../../../../projections/records/sampleBlocks/decodedBlocks.js';
import { decodeBlock, encodeBlock, type SampleDoc } from '../../../../projections/records/sampleBlocks/sampleBlock.js';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import { deriveBatch, pushChanges } from '../../../../src/projector/batchChanges.js';
import type { PositionedChange } from '../../../../src/readstore/readStore.js';
import { BASE, blockState, hr, MIN, samplesStore } from './blockStoreHarness.js';
import { ingested, project, sequenceOf } from '../harness.js';

/**
 * The projection keeps the blocks its last batches decoded or wrote (decodedBlocks.ts), so that
 * consecutive live batches do not decode the same days again. What it keeps must never stand in
 * for what the store holds (docs/sample-blocks.md "Costs and limits").
 */
const storeFor = () => samplesStore('wellstream-decoded-blocks-');
const state = blockState;

describe('decoded blocks kept between batches (issue 38)', () => {
  const samples = decodeBlock(encodeBlock([hr('a', BASE, 60), hr('b', BASE + MIN, 61)].map((r, j) => ({ ...r, user_id: 'u-1', _id: `key-${j}`.padEnd(22, 'x'), id: j + 1 }) as unknown as SampleDoc)));
  const data = encodeBlock(samples);

  it('answers the kept samples only for the data they were kept with, and each only once', () => {
    const kept = new DecodedBlocks();
    kept.keep('b.0', data, samples);
    expect(kept.take('b.0', data).samples).toBe(samples);
    // Taken: the batch that took them may set flags on them.
    const again = kept.take('b.0', data).samples;
    expect(again).not.toBe(samples);
    expect(again).toEqual(samples);
    kept.keep('b.0', data, samples);
    const other = encodeBlock(samples.slice(1));
    expect(kept.take('b.0', other)).toEqual({ samples: samples.slice(1), data: other });
    expect(kept.size).toBe(0);
  });

  it('keeps a written block as copies of its samples equal to what its data decodes to, and nothing over its bound', () => {
    const kept = new DecodedBlocks(3);
    kept.keep('b.0', data, samples);
    kept.keepWritten('b.0', data, samples);
    const taken = kept.take('b.0', data).samples;
    expect(taken).not.toBe(samples);
    expect(taken.every((s, j) => s !== samples[j])).toBe(true);
    expect(taken).toEqual(decodeBlock(data));
    const four = encodeBlock([...samples, ...samples.map((s) => ({ ...s, _id: s._id.replace('key', 'kez'), id: s.id + 2 }))]);
    kept.keep('b.0', data, samples);
    kept.keepWritten('b.0', four, decodeBlock(four));
    expect(kept.size).toBe(0);
  });

  it('holds at most its bound of samples, letting go of the blocks kept first', () => {
    const kept = new DecodedBlocks(3);
    kept.keep('b.0', data, samples);
    kept.keep('b.1', data, samples);
    expect(kept.size).toBe(2);
    expect(kept.take('b.0', data).samples).not.toBe(samples);
    expect(kept.take('b.1', data).samples).toBe(samples);
  });

  it("lets go of an erased user's blocks, or of one erased provider's only", () => {
    const kept = new DecodedBlocks();
    const other = samples.map((s) => ({ ...s, provider: 'device-b' }));
    kept.keep('a.0', data, samples);
    kept.keep('b.0', data, other);
    kept.forget('u-1', 'device-b');
    expect(kept.size).toBe(2);
    kept.forget('someone else');
    expect(kept.size).toBe(2);
    kept.forget('u-1');
    expect(kept.size).toBe(0);
  });

  it('a batch whose changes were never stored (failed, rolled back) leaves nothing the next batch reads', async () => {
    const first = ingested('quantity', 1, [hr('a', BASE + 10 * MIN, 61), hr('b', BASE + 20 * MIN, 62), hr('c', BASE + 30 * MIN, 63)]);
    const lost = ingested('quantity', 2, [hr('a', BASE + 86_400_000 + 10 * MIN, 71), hr('c', BASE + 30 * MIN, 99), hr('x', BASE + 25 * MIN, 50)]);
    const next = ingested('quantity', 2, [hr('b', BASE + 20 * MIN, 72), hr('e', BASE + 40 * MIN, 75)]);

    const expected = await storeFor();
    await project(expected, samplesProjection, [first, next]);

    const store = await storeFor();
    await project(store, samplesProjection, [first]);
    // The derivation runs (and keeps what it wrote), the batch is then dropped.
    const changes: PositionedChange[] = [];
    pushChanges(samplesProjection, lost, changes, sequenceOf(samplesProjection, lost));
    await deriveBatch(store, samplesProjection.derive!, [lost], changes, async () => {});
    await project(store, samplesProjection, [next]);
    expect(await state(store)).toEqual(await state(expected));
    await store.close();
    await expected.close();
  });
});
