import type { ReadStore } from '../../../src/readstore/readStore.js';
import { decodeBlock, type SampleDoc } from './sampleBlock.js';

/**
 * Samples kept decoded between the projection's batches, at most this many (400-800 bytes of heap
 * each, with their metadata). A live batch of the ingest bench (one or two events of a thousand
 * records) reads two days of a user's heart rate and steps, about 9,000 samples: room for one
 * batch's days and the next one's. 40,000 (room for a small and a bulk job's batches alternating,
 * twice over) kept about 30 MiB live in the projector thread for no shorter ingest (BENCHMARKS.md,
 * issue 38, the 1M ingest's peak RSS).
 */
export const DECODED_SAMPLES = 16_000;

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

  /**
   * The samples of block `id` stored with `data`: the kept ones when they are of that data, else
   * decoded; the caller owns them. With them the string to keep them with again: the kept one when
   * it is the same, so that the copy just read from the store dies young. Keeping the copy instead
   * made every batch promote a second copy of each block it read (about 80 KB a block) and left
   * the kept one as old-generation garbage (issue 38, h17/compile: the projector's mark-compacts).
   */
  take(id: string, data: string): { samples: SampleDoc[]; data: string } {
    const e = this.remove(id);
    return e?.data === data ? e : { samples: decodeBlock(data), data };
  }

  /**
   * Block `id` as a batch wrote it, its samples kept as compact copies (compactCopies): the batch
   * built them from the events' records, about 1.5 KB of heap each, and the kept ones outlive the
   * batch in the old generation (issue 38: the 1M ingest's peak RSS, BENCHMARKS.md). The samples
   * in `compact` (decoded from the store or kept before: compact already) are kept as they are.
   */
  keepWritten(id: string, data: string, samples: readonly SampleDoc[], compact: ReadonlySet<SampleDoc> = new Set()): void {
    if (samples.length > this.maxSamples) {
      this.remove(id);
      return;
    }
    this.keep(id, data, compactCopies(samples, compact));
  }

  /** Block `id` as a batch leaves it: `samples` encode to `data`, and nobody changes them any more. */
  keep(id: string, data: string, samples: SampleDoc[]): void {
    this.remove(id);
    if (samples.length > this.maxSamples) return;
    this.entries.set(id, { data, samples });
    this.samples += samples.length;
    for (const oldest of this.entries.keys()) {
      if (this.samples <= this.maxSamples) break;
      this.remove(oldest);
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
      if (s && s.user_id === userId && (provider === undefined || s.provider === provider)) this.remove(id);
    }
  }

  /** Takes block `id`'s entry out (answered, if there was one). */
  private remove(id: string): { data: string; samples: SampleDoc[] } | undefined {
    const e = this.entries.get(id);
    if (e) {
      this.entries.delete(id);
      this.samples -= e.samples.length;
    }
    return e;
  }

  get size(): number {
    return this.samples;
  }
}

/**
 * Copies of a block's samples that take less heap: each a fresh object of its fields (a sample a
 * batch built from an event's record is an object grown field by field, about 700 B more than a
 * copy of it), and a text field with one value in the whole block (provenance, owner, unit, type,
 * day) one string for all, as decodeBlock answers it; an instant's end_date is its start_date's
 * string. About 1,550 B a sample becomes about 500 (measured on the ingest bench's records); a
 * decode of the written data instead (about 400 B) cost the live projector 10-15 % more CPU.
 * Samples in `compact` are compact already and kept as they are: a live batch appends a few
 * hundred samples to a block of up to a thousand, and copying them all again each batch made
 * old-generation garbage of every kept sample (issue 38, H16-C).
 */
function compactCopies(samples: readonly SampleDoc[], compact: ReadonlySet<SampleDoc>): SampleDoc[] {
  const out: Record<string, unknown>[] = [];
  const copies: Record<string, unknown>[] = [];
  for (const s of samples) {
    if (compact.has(s)) out.push(s as unknown as Record<string, unknown>);
    else {
      const d = { ...s } as Record<string, unknown>;
      out.push(d);
      copies.push(d);
    }
  }
  const first = out[0];
  if (!first) return [];
  if (!copies.length) return out as unknown as SampleDoc[];
  for (const f in first) {
    const v = first[f];
    if (typeof v !== 'string' || f === '_id' || f === 'start_date' || f === 'end_date') continue;
    let same = true;
    for (let j = 1; j < out.length && same; j++) same = out[j]![f] === v;
    if (same) for (const d of copies) d[f] = v;
  }
  for (const d of copies) if (d.end_date === d.start_date) d.end_date = d.start_date;
  return out as unknown as SampleDoc[];
}

const perStore = new WeakMap<ReadStore, DecodedBlocks>();

/** The decoded blocks kept for the projection's batches on `readStore` (one writer of blocks per store connection). */
export function decodedBlocksOf(readStore: ReadStore): DecodedBlocks {
  let d = perStore.get(readStore);
  if (!d) perStore.set(readStore, (d = new DecodedBlocks()));
  return d;
}
