import type { ReadStore } from '../../../src/readstore/readStore.js';
import { decodeBlock, type SampleDoc } from './sampleBlock.js';

/**
 * Samples kept decoded between the projection's batches, at most this many (about 400 bytes of
 * heap each). A live batch of the ingest bench (one or two events of a thousand records) reads two
 * days of a user's heart rate and steps, about 9,000 samples, and the ETL runs a small and a bulk
 * job at once, whose batches alternate: room for both, twice over.
 */
export const DECODED_SAMPLES = 40_000;

/**
 * The blocks the samples projection decoded or wrote in its last batches, by `_id`, each with the
 * `data` it was decoded from or encoded to (docs/sample-blocks.md "Costs and limits"). Live batches
 * are small and consecutive ones read the same days: decoding a day's blocks again for every batch
 * (one object per sample) cost more than the rest of the batch (issue 38, BENCHMARKS.md).
 *
 * An entry is used only when the block as stored now has the very `data` it was kept with, so it
 * can never answer what the store does not hold: a batch that failed or rolled back after writing
 * it, a rebuild, another writer, all read back other data and decode it. An entry is taken out
 * when used (the batch sets flags on its samples) and kept again only once the batch has decided
 * the block's samples (blockSession's flush), with the data they encode to.
 */
export class DecodedBlocks {
  /** In the order they were kept: the first is the first to go. */
  private readonly entries = new Map<string, { data: string; samples: SampleDoc[] }>();
  private samples = 0;

  constructor(private readonly maxSamples = DECODED_SAMPLES) {}

  /** The samples of block `id` stored with `data`: the kept ones when they are of that data, else decoded. The caller owns them. */
  take(id: string, data: string): SampleDoc[] {
    const e = this.entries.get(id);
    if (e) {
      this.entries.delete(id);
      this.samples -= e.samples.length;
      if (e.data === data) return e.samples;
    }
    return decodeBlock(data);
  }

  /** Block `id` as a batch leaves it: `samples` encode to `data`, and nobody changes them any more. */
  keep(id: string, data: string, samples: SampleDoc[]): void {
    const before = this.entries.get(id);
    if (before) {
      this.entries.delete(id);
      this.samples -= before.samples.length;
    }
    if (samples.length > this.maxSamples) return;
    this.entries.set(id, { data, samples });
    this.samples += samples.length;
    for (const [oldest, e] of this.entries) {
      if (this.samples <= this.maxSamples) break;
      this.entries.delete(oldest);
      this.samples -= e.samples.length;
    }
  }

  /**
   * Lets go of the kept blocks of a user (of one provider only, when given): an erasure's batch
   * deletes their blocks, and no health value of an erased user stays in memory until it would
   * have been let go of anyway (docs/erasure.md).
   */
  forget(userId: string, provider?: string): void {
    for (const [id, e] of this.entries) {
      const s = e.samples[0];
      if (s && s.user_id === userId && (provider === undefined || s.provider === provider)) {
        this.entries.delete(id);
        this.samples -= e.samples.length;
      }
    }
  }

  get size(): number {
    return this.samples;
  }
}

const perStore = new WeakMap<ReadStore, DecodedBlocks>();

/** The decoded blocks kept for the projection's batches on `readStore` (one writer of blocks per store connection). */
export function decodedBlocksOf(readStore: ReadStore): DecodedBlocks {
  let d = perStore.get(readStore);
  if (!d) perStore.set(readStore, (d = new DecodedBlocks()));
  return d;
}
