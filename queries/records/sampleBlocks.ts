import type { Filter, ReadStore, Scalar } from '../../src/readstore/readStore.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import { decodeBlock, SAMPLE_BLOCKS, SAMPLE_KEYS, type SampleBlockDoc } from '../../projections/records/sampleBlocks/sampleBlock.js';
import { utcDay } from '../../projections/records/recordDoc.js';

/**
 * Every read of quantity samples goes through here (issue 38, docs/sample-blocks-reads.md): the
 * samples projection stores them in blocks (`sample_blocks`, one per user, type, provider,
 * source and UTC day of start, at most 1,000 samples), and a reader asks for samples of one
 * user and type in (start_date, id) order, as the per-sample rows' index gave them. The order
 * and the keyset cursor are those of the rows: `[start_date, id, _id]` (the read store's sort
 * with its `_id` tie-breaker), so a cursor written before blocks continues after them.
 */

/** The keyset order of samples (a list's cursor holds these values of its last sample). */
export const SAMPLE_ORDER = [['start_date', 1], ['id', 1], ['_id', 1]] as const;

/** The cursor of a sample: its values of SAMPLE_ORDER. */
export const sampleCursor = (s: SampleDoc): Scalar[] => [s.start_date, s.id, s._id];

/** Samples of one user and type to read: start_date in [start, end) (ISO instants), after a cursor, the ones `keep` admits. */
export type SampleRange = {
  userId: string;
  type: string;
  start?: string | null;
  end?: string | null;
  /** Values of SAMPLE_ORDER of the last sample seen: only samples after it. */
  after?: readonly Scalar[] | null;
  /** Only blocks (and so samples) of this provider. */
  provider?: string;
  keep?: (s: SampleDoc) => boolean;
};

/** Blocks fetched per read at first; doubled each read up to BATCH_MAX (a page of 1,000 needs two or three). */
const BATCH_FIRST = 4;
const BATCH_MAX = 64;

/** Store order of the same values: strings and numbers each in their natural order (a cursor holds a string, a number, a string). */
function cmp(a: Scalar | undefined, b: Scalar | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a !== typeof b) return typeof a < typeof b ? -1 : 1;
  return (a as string | number) < (b as string | number) ? -1 : 1;
}

/** (start_date, id, _id) of a against b. */
function compareSamples(a: SampleDoc, b: SampleDoc): number {
  if (a.start_date !== b.start_date) return a.start_date < b.start_date ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return a._id === b._id ? 0 : a._id < b._id ? -1 : 1;
}

/** True when s sorts after the cursor's values. */
function isAfter(s: SampleDoc, after: readonly Scalar[]): boolean {
  return (cmp(s.start_date, after[0]) || cmp(s.id, after[1]) || cmp(s._id, after[2])) > 0;
}

type Run = { samples: SampleDoc[]; i: number };

/**
 * The samples of a range in (start_date, id, _id) order, read block by block as they are taken:
 * the blocks come in (day, start_min) order through the (user_id, type, day, start_min, _id)
 * index, and a block is decoded only when a sample it may hold is next (its first start is at or
 * before the least start among the decoded ones left), so a page decodes the blocks it lists
 * from plus the few whose spans overlap them (another source's samples of the same minutes).
 */
export class SampleReader {
  private readonly filter: Filter;
  private readonly lo: string | null;
  private readonly hi: string | null;
  private readonly after: readonly Scalar[] | null;
  private pending: SampleBlockDoc[] = [];
  private next = 0;
  private blockAfter: Scalar[] | undefined;
  private batch = BATCH_FIRST;
  private exhausted = false;
  private readonly runs: Run[] = [];

  constructor(
    private readonly readStore: ReadStore,
    private readonly range: SampleRange,
  ) {
    this.after = range.after?.length ? range.after : null;
    const cursorStart = this.after && typeof this.after[0] === 'string' ? this.after[0] : null;
    this.lo = range.start != null && (cursorStart === null || range.start > cursorStart) ? range.start : cursorStart;
    this.hi = range.end ?? null;
    // A block's day is the UTC date of its samples' starts: a window of starts is a range of days,
    // and a block whose last start is before the window's (or the cursor's) has nothing to list.
    const day: Record<string, string> = {};
    if (this.lo !== null) day.$gte = utcDay(this.lo);
    if (this.hi !== null) day.$lte = utcDay(this.hi);
    this.filter = {
      user_id: range.userId,
      type: range.type,
      ...(range.provider !== undefined ? { provider: range.provider } : {}),
      ...(Object.keys(day).length ? { day } : {}),
      ...(this.lo !== null ? { start_max: { $gte: this.lo } } : {}),
      ...(this.hi !== null ? { start_min: { $lt: this.hi } } : {}),
    };
  }

  /** Up to n more samples, in order; fewer only at the end of the range. */
  async take(n: number): Promise<SampleDoc[]> {
    const out: SampleDoc[] = [];
    while (out.length < n) {
      let head = this.head();
      // Open every block that may hold a sample at or before the least one decoded.
      for (;;) {
        const block = await this.peekBlock();
        if (!block || (head && block.start_min > head.samples[head.i]!.start_date)) break;
        this.next++;
        this.open(block);
        head = this.head();
      }
      if (!head) break;
      out.push(head.samples[head.i++]!);
      if (head.i === head.samples.length) this.runs.splice(this.runs.indexOf(head), 1);
    }
    return out;
  }

  /** The run whose next sample is least. */
  private head(): Run | null {
    let best: Run | null = null;
    for (const r of this.runs) if (!best || compareSamples(r.samples[r.i]!, best.samples[best.i]!) < 0) best = r;
    return best;
  }

  private open(block: SampleBlockDoc): void {
    const { lo, hi, after } = this;
    const keep = this.range.keep;
    const samples = decodeBlock(block).filter(
      (s) => (lo === null || s.start_date >= lo) && (hi === null || s.start_date < hi) && (after === null || isAfter(s, after)) && (!keep || keep(s)),
    );
    if (samples.length) this.runs.push({ samples, i: 0 });
  }

  private async peekBlock(): Promise<SampleBlockDoc | null> {
    if (this.next < this.pending.length) return this.pending[this.next]!;
    if (this.exhausted) return null;
    const sort = [['day', 1], ['start_min', 1], ['_id', 1]] as const;
    const blocks = await this.readStore.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter: this.filter, sort, limit: this.batch, after: this.blockAfter });
    if (blocks.length < this.batch) this.exhausted = true;
    this.batch = Math.min(BATCH_MAX, this.batch * 2);
    this.pending = blocks;
    this.next = 0;
    const last = blocks[blocks.length - 1];
    if (last) this.blockAfter = [last.day, last.start_min, last._id];
    return blocks[0] ?? null;
  }
}

/** Every sample of a range in order, `chunk` at a time (statistics' raw path, the merge preview). */
export async function* sampleChunks(readStore: ReadStore, range: SampleRange, chunk: number): AsyncGenerator<SampleDoc[]> {
  const reader = new SampleReader(readStore, range);
  for (;;) {
    const rows = await reader.take(chunk);
    if (rows.length) yield rows;
    if (rows.length < chunk) return;
  }
}

/** One page of a range: up to `limit` samples and the cursor after the last when more follow. */
export async function samplePage(readStore: ReadStore, range: SampleRange, limit: number): Promise<{ items: SampleDoc[]; next: Scalar[] | null }> {
  const rows = await new SampleReader(readStore, range).take(limit + 1);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last ? sampleCursor(last) : null };
}

/** A user's sample by its integer id: its locator row names its block. */
export async function sampleById(readStore: ReadStore, userId: string, id: number): Promise<SampleDoc | null> {
  const [key] = await readStore.find<{ _id: string; block: string }>(SAMPLE_KEYS, { filter: { user_id: userId, id }, limit: 1, fields: ['block'] });
  if (!key) return null;
  const [block] = await readStore.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter: { _id: key.block, user_id: userId }, limit: 1 });
  return (block && decodeBlock(block).find((s) => s.id === id)) ?? null;
}

/** True when the user has a sample of the type (a block holds at least one). */
export async function hasSamplesOfType(readStore: ReadStore, userId: string, type: string): Promise<boolean> {
  return (await readStore.find(SAMPLE_BLOCKS, { filter: { user_id: userId, type }, limit: 1, fields: ['type'] })).length > 0;
}

/** How many samples of the user came through the provider (the locators: one a sample). */
export async function countProviderSamples(readStore: ReadStore, userId: string, provider: string): Promise<number> {
  return readStore.count(SAMPLE_KEYS, { user_id: userId, provider });
}

/** True when the user has a sample of the provider starting on the UTC day. */
export async function hasSamplesOnDay(readStore: ReadStore, userId: string, provider: string, day: string): Promise<boolean> {
  return (await readStore.find(SAMPLE_BLOCKS, { filter: { user_id: userId, day, provider }, limit: 1, fields: ['day'] })).length > 0;
}

/**
 * The quantity types a user has samples of, in order, one index seek per type (a skip scan over
 * the blocks' (user_id, type, …) index): no type list is held whatever the number of samples.
 */
export async function* userSampleTypes(readStore: ReadStore, userId: string): AsyncGenerator<string> {
  let last: string | null = null;
  for (;;) {
    const filter: Filter = last === null ? { user_id: userId } : { user_id: userId, type: { $gt: last } };
    const [next] = await readStore.find<{ _id: string; type: string }>(SAMPLE_BLOCKS, { filter, sort: [['type', 1]], limit: 1, fields: ['type'] });
    if (!next) return;
    last = next.type;
    yield next.type;
  }
}

/** The latest end_date (as the rows' `max` compared them: as strings) among a provider's samples of one type starting on the days [fromDay, toDay]. */
export async function latestSampleEnd(readStore: ReadStore, q: { userId: string; type: string; provider: string; fromDay: string; toDay: string }): Promise<string | null> {
  let best: string | null = null;
  let after: Scalar[] | undefined;
  const filter: Filter = { user_id: q.userId, type: q.type, provider: q.provider, day: { $gte: q.fromDay, $lte: q.toDay } };
  const sort = [['day', 1], ['start_min', 1], ['_id', 1]] as const;
  for (;;) {
    const blocks = await readStore.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter, sort, limit: BATCH_MAX, after });
    for (const b of blocks) for (const s of decodeBlock(b)) if (best === null || s.end_date > best) best = s.end_date;
    if (blocks.length < BATCH_MAX) return best;
    const last = blocks[blocks.length - 1]!;
    after = [last.day, last.start_min, last._id];
  }
}
