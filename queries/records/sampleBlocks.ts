import type { Filter, ReadStore, Scalar } from '../../src/readstore/readStore.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import { canonicalIsoMs } from '../../src/shared/isoInstant.js';
import { familyBlocks, familyOfId } from '../../projections/records/sampleBlocks/packedLocators.js';
import { blockColumns, isoOf, SAMPLE_BLOCKS, type BlockColumns, type SampleBlockDoc } from '../../projections/records/sampleBlocks/sampleBlock.js';
import { utcDay } from '../../projections/records/recordDoc.js';

/**
 * Every read of quantity samples goes through here (issue 38, docs/sample-blocks-reads.md): the
 * samples projection stores them in blocks (`sample_blocks`, one per user, type, provider,
 * source and UTC day of start, at most 1,000 samples), and a reader asks for samples of one
 * user and type in (start_date, id) order, as the per-sample rows' index gave them. The order
 * and the keyset cursor are those of the rows: `[start_date, id, _id]` (the read store's sort
 * with its `_id` tie-breaker), so a cursor written before blocks continues after them.
 */

/** Samples of one user and type to read: start_date in [start, end) (ISO instants), after a cursor, without the ones `leaveOut` names. */
export type SampleRange = {
  userId: string;
  type: string;
  start?: string | null;
  end?: string | null;
  /** The cursor of the last sample seen, its (start_date, id, _id): only samples after it. */
  after?: readonly Scalar[] | null;
  /** Only blocks (and so samples) of this provider. */
  provider?: string;
  /** Flags whose `true` leaves a sample out: `hidden` (the merged view), `excluded` (statistics). */
  leaveOut?: readonly SampleFlag[];
};

export type SampleFlag = 'hidden' | 'excluded';

/** A sample of a block read by column: sample j of `cols`. */
export type SampleRef = { cols: BlockColumns; j: number };

/** Blocks fetched per read at first; doubled each read up to BATCH_MAX (a page of 1,000 needs two or three). */
const BATCH_FIRST = 4;
const BATCH_MAX = 64;

/**
 * The blocks of `filter` in the order of their (user_id, type, day, start_min, _id) index, read
 * `first` at a time and then twice as many per read, up to BATCH_MAX, by keyset.
 */
async function* blocksInOrder(readStore: ReadStore, filter: Filter, first: number): AsyncGenerator<SampleBlockDoc> {
  const sort = [['day', 1], ['start_min', 1], ['_id', 1]] as const;
  let after: Scalar[] | undefined;
  for (let limit = first; ; limit = Math.min(BATCH_MAX, limit * 2)) {
    const blocks = await readStore.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter, sort, limit, after });
    yield* blocks;
    if (blocks.length < limit) return;
    const last = blocks[blocks.length - 1]!;
    after = [last.day, last.start_min, last._id];
  }
}

/** Store order of the same values: strings and numbers each in their natural order (a cursor holds a string, a number, a string). */
function cmp(a: Scalar | undefined, b: Scalar | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a !== typeof b) return typeof a < typeof b ? -1 : 1;
  return (a as string | number) < (b as string | number) ? -1 : 1;
}

/**
 * A start as the reader compares it: epoch ms where the ISO text is canonical (canonicalIsoMs; such
 * texts order as their ms do), else the text. Comparing numbers spares a page the ISO string of
 * every start of the blocks it opens; a text and a number compare as texts.
 */
type StartKey = number | string;
const startKey = (iso: string): StartKey => {
  const ms = canonicalIsoMs(iso);
  return Number.isNaN(ms) ? iso : ms;
};
function cmpStart(a: StartKey, b: StartKey): number {
  if (typeof a !== typeof b) {
    a = typeof a === 'number' ? isoOf(a) : a;
    b = typeof b === 'number' ? isoOf(b) : b;
  }
  return a === b ? 0 : a < b ? -1 : 1;
}

/** The samples of a block a run still has to give, in order: their indexes in the block's columns (the block's start instants when it has them). */
type Run = { cols: BlockColumns; ms: readonly number[] | null; idx: number[]; i: number };

const runStart = (r: Run): StartKey => (r.ms ? r.ms[r.idx[r.i]!]! : r.cols.start(r.idx[r.i]!));

/** (start_date, id, _id) of the next sample of run a against run b's. */
function compareRuns(a: Run, b: Run): number {
  const s = cmpStart(runStart(a), runStart(b));
  if (s) return s;
  const ia = a.cols.id(a.idx[a.i]!);
  const ib = b.cols.id(b.idx[b.i]!);
  if (ia !== ib) return ia < ib ? -1 : 1;
  const ka = a.cols.key(a.idx[a.i]!);
  const kb = b.cols.key(b.idx[b.i]!);
  return ka === kb ? 0 : ka < kb ? -1 : 1;
}

/**
 * The samples of a range in (start_date, id, _id) order, read block by block as they are taken:
 * the blocks come in (day, start_min) order through the (user_id, type, day, start_min, _id)
 * index, and a block is parsed only when a sample it may hold is next (its first start is at or
 * before the least start among the parsed ones left), so a page reads the blocks it lists from
 * plus the few whose spans overlap them (another source's samples of the same minutes). Blocks
 * are read by column (BlockColumns): a sample becomes a document only when a caller asks. A
 * block whose samples all carry a flag the range leaves out (the merged view's hidden source)
 * gives nothing, without a look at its samples.
 */
export class SampleReader {
  private readonly lo: StartKey | null;
  private readonly hi: StartKey | null;
  private readonly after: readonly Scalar[] | null;
  private readonly afterStart: StartKey | null;
  private readonly leaveOut: readonly SampleFlag[];
  private blocks!: AsyncGenerator<SampleBlockDoc>;
  /** The next block, read and not yet opened (undefined: not read yet; null: none left), and its start_min as a StartKey. */
  private peeked: SampleBlockDoc | null | undefined;
  private peekedStart: StartKey = '';
  private readonly runs: Run[] = [];

  constructor(
    readStore: ReadStore,
    range: SampleRange,
  ) {
    this.after = range.after?.length ? range.after : null;
    this.leaveOut = range.leaveOut ?? [];
    const cursorStart = this.after && typeof this.after[0] === 'string' ? this.after[0] : null;
    const lo = range.start != null && (cursorStart === null || range.start > cursorStart) ? range.start : cursorStart;
    const hi = range.end ?? null;
    this.lo = lo === null ? null : startKey(lo);
    this.hi = hi === null ? null : startKey(hi);
    this.afterStart = cursorStart === null ? null : startKey(cursorStart);
    // A block's day is the UTC date of its samples' starts: a window of starts is a range of days,
    // and a block whose last start is before the window's (or the cursor's) has nothing to list.
    const day: Record<string, string> = {};
    if (lo !== null) day.$gte = utcDay(lo);
    if (hi !== null) day.$lte = utcDay(hi);
    const filter: Filter = {
      user_id: range.userId,
      type: range.type,
      ...(range.provider !== undefined ? { provider: range.provider } : {}),
      ...(Object.keys(day).length ? { day } : {}),
      ...(lo !== null ? { start_max: { $gte: lo } } : {}),
      ...(hi !== null ? { start_min: { $lt: hi } } : {}),
      // A block none of whose samples the merged view lists is not read at all.
      ...(this.leaveOut.includes('hidden') ? { listed: { $gt: 0 } } : {}),
    };
    this.blocks = blocksInOrder(readStore, filter, BATCH_FIRST);
  }

  /** Up to n more samples, in order; fewer only at the end of the range. */
  async take(n: number): Promise<SampleRef[]> {
    const out: SampleRef[] = [];
    while (out.length < n) {
      let head = this.head();
      // Open every block that may hold a sample at or before the least one parsed.
      for (;;) {
        const block = await this.peekBlock();
        if (!block || (head && cmpStart(this.peekedStart, runStart(head)) > 0)) break;
        this.peeked = undefined;
        this.open(block);
        head = this.head();
      }
      if (!head) break;
      out.push({ cols: head.cols, j: head.idx[head.i++]! });
      if (head.i === head.idx.length) this.runs.splice(this.runs.indexOf(head), 1);
    }
    return out;
  }

  /** The run whose next sample is least. */
  private head(): Run | null {
    let best: Run | null = null;
    for (const r of this.runs) if (!best || compareRuns(r, best) < 0) best = r;
    return best;
  }

  private open(block: SampleBlockDoc): void {
    const cols = blockColumns(block.data);
    // A flag held by every sample of the block: true leaves the whole block out, anything else none of it.
    const flags: SampleFlag[] = [];
    for (const f of this.leaveOut) {
      if (!cols.constant(f)) flags.push(f);
      else if (cols.n && cols.field(f, 0) === true) return;
    }
    const { lo, hi, after, afterStart } = this;
    const ms = cols.startMs;
    const idx: number[] = [];
    samples: for (let j = 0; j < cols.n; j++) {
      const start: StartKey = ms ? ms[j]! : cols.start(j);
      if ((lo !== null && cmpStart(start, lo) < 0) || (hi !== null && cmpStart(start, hi) >= 0)) continue;
      if (after !== null) {
        const s = afterStart !== null ? cmpStart(start, afterStart) : cmp(cols.start(j), after[0]);
        if ((s || cmp(cols.id(j), after[1]) || cmp(cols.key(j), after[2])) <= 0) continue;
      }
      for (const f of flags) if (cols.field(f, j) === true) continue samples;
      idx.push(j);
    }
    if (idx.length) this.runs.push({ cols, ms, idx, i: 0 });
  }

  private async peekBlock(): Promise<SampleBlockDoc | null> {
    if (this.peeked === undefined) {
      const r = await this.blocks.next();
      this.peeked = r.done ? null : r.value;
      if (this.peeked) this.peekedStart = startKey(this.peeked.start_min);
    }
    return this.peeked;
  }
}

/** The documents of samples read by column (as decodeBlock answers them). */
export const docsOf = (refs: readonly SampleRef[]): SampleDoc[] => refs.map((r) => r.cols.doc(r.j));

/** Up to `max` samples of a range, in order, as documents. */
export async function readSamples(readStore: ReadStore, range: SampleRange, max: number): Promise<SampleDoc[]> {
  return docsOf(await new SampleReader(readStore, range).take(max));
}

/** Every sample of a range in order, `chunk` at a time, as documents (statistics' raw path). */
export async function* sampleChunks(readStore: ReadStore, range: SampleRange, chunk: number): AsyncGenerator<SampleDoc[]> {
  const reader = new SampleReader(readStore, range);
  for (;;) {
    const refs = await reader.take(chunk);
    if (refs.length) yield docsOf(refs);
    if (refs.length < chunk) return;
  }
}

/** One page of a range: up to `limit` samples and the cursor after the last when more follow. */
export async function samplePage(readStore: ReadStore, range: SampleRange, limit: number): Promise<{ refs: SampleRef[]; next: Scalar[] | null }> {
  const rows = await new SampleReader(readStore, range).take(limit + 1);
  const refs = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = refs[refs.length - 1];
  return { refs, next: rows.length > limit && last ? [last.cols.start(last.j), last.cols.id(last.j), last.cols.key(last.j)] : null };
}

/** Blocks a read by id holds at once (sampleById). */
const BY_ID_BLOCKS = 4;

/**
 * A user's sample by its integer id: the id row of its storing event names its block family
 * (packedLocators.ts), whose blocks (the user's only) are searched for the id, in order.
 */
export async function sampleById(readStore: ReadStore, userId: string, id: number): Promise<SampleDoc | null> {
  const family = await familyOfId(readStore, userId, id);
  if (family === null) return null;
  // A few blocks at a time: a family is a day of one series, and a day of sub-second samples is
  // many blocks; the read holds no more than BY_ID_BLOCKS of them at once.
  let after: string[] | undefined;
  for (;;) {
    const blocks = await readStore.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter: { _id: familyBlocks(family), user_id: userId }, sort: [['_id', 1]], limit: BY_ID_BLOCKS, after });
    for (const block of blocks) {
      const cols = blockColumns(block.data);
      for (let j = 0; j < cols.n; j++) if (cols.id(j) === id) return cols.doc(j);
    }
    if (blocks.length < BY_ID_BLOCKS) return null;
    after = [blocks[blocks.length - 1]!._id];
  }
}

/** True when the user has a sample of the type (a block holds at least one). */
export async function hasSamplesOfType(readStore: ReadStore, userId: string, type: string): Promise<boolean> {
  return (await readStore.find(SAMPLE_BLOCKS, { filter: { user_id: userId, type }, limit: 1, fields: ['type'] })).length > 0;
}

/** How many samples of the user came through the provider: their blocks' counts added up (a block holds one provider's samples). */
export async function countProviderSamples(readStore: ReadStore, userId: string, provider: string): Promise<number> {
  const [row] = await readStore.aggregate(SAMPLE_BLOCKS, { filter: { user_id: userId, provider }, groupBy: [], sum: ['count'] });
  return row?.sum.count ?? 0;
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
  const filter: Filter = { user_id: q.userId, type: q.type, provider: q.provider, day: { $gte: q.fromDay, $lte: q.toDay } };
  for await (const b of blocksInOrder(readStore, filter, BATCH_MAX)) {
    const cols = blockColumns(b.data);
    for (let j = 0; j < cols.n; j++) {
      const end = cols.field('end_date', j) as string;
      if (best === null || end > best) best = end;
    }
  }
  return best;
}
