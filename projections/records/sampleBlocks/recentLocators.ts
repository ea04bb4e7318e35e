import { randomUUID } from 'node:crypto';
import type { Change, Doc, Filter, ReadStore } from '../../../src/readstore/readStore.js';
import { ReplayLocators as LocatorFilter } from './replayLocators.js';
import { SAMPLE_KEYS, type SampleKeyDoc, USER_TAG, userTag } from './sampleBlock.js';

/**
 * The recent tier of the samples' locators (docs/sample-blocks.md "The locators' recent tier"):
 * the locators the live projection wrote since its last merge, packed into **runs**, one row per
 * (user, provider) of a batch, keyed by an increasing number, never into `sample_keys`' random
 * `_id` index. `sample_keys` (main) holds the rest; a locator in a run is newer than main's row of
 * the same `_id`, and a later run's than an earlier one's. When the tier passes its limits
 * (`recentTierLimits`), a merge puts it into main in `_id` order over the next `slices` batches
 * (`mergeSlice`) and then deletes the runs it took: each page of main's `_id` index is written
 * about once per merge, where a locator per batch put into main wrote about one page per locator
 * (BENCHMARKS.md, issue 38, h18/locators).
 */
export const SAMPLE_KEY_RUNS = 'sample_key_runs';

/**
 * When the tier is merged into main, and in how many slices. Fixed, not the caller's to choose:
 * the tier is kept in the projector's memory too (about 150 B per locator). A merge is spread over
 * `slices` batches, each putting into main the tier's locators of one slice of the record keys
 * (about 1/16 of main's pages): a merge in one batch wrote most of main's pages in one commit,
 * ~0.5 s during which every tenant's batch waited (fairness bench: another tenant's p99 150 →
 * 700 ms). A slice is merged by a batch that wrote `mergeFrom` locators or more (a bulk import's,
 * which filled the tier), not by a one-line upload's that happens to come next: that batch is
 * what its tenant waits on, and a slice cost it 120-350 ms (h20/fair). Batches of fewer merge only
 * while the tier is past twice its bounds, so that small uploads alone still merge it.
 * Exported for the tests only, to make a merge happen with a few records.
 */
export const recentTierLimits = { locators: 100_000, runs: 4_000, slices: 16, mergeFrom: 100 };

/**
 * A run: `user_id` and `provider` (an erasure deletes the user's, or the user's and provider's,
 * runs as it deletes every record row), `id_min`/`id_max` (a read by id looks only in the runs
 * whose range holds it), and `data`, the packed locators: `k` the record keys' first characters
 * (locatorId without the user's tag), `i` the ids, `b` the blocks named, `x` each locator's block
 * by its index in `b`.
 */
export type KeyRunDoc = Doc & { user_id: string; provider: string; id_min: number; id_max: number; count: number; data: string };
type PackedRun = { k: string[]; i: number[]; b: string[]; x: number[] };

/** A locator of the tier: what a main row holds besides its `_id`, and the number of the run that holds it. */
type Entry = { id: number; block: string; provider: string; run: number };

/** The run doc of locators of one user and provider (their `_id`s start with the user's tag). */
function packRun(_id: string, userId: string, provider: string, keys: readonly SampleKeyDoc[]): KeyRunDoc {
  const tagLength = userTag(userId).length;
  const packed: PackedRun = { k: [], i: [], b: [], x: [] };
  const blockIndex = new Map<string, number>();
  let lo = Infinity;
  let hi = -Infinity;
  for (const key of keys) {
    packed.k.push(key._id.slice(tagLength));
    packed.i.push(key.id);
    let b = blockIndex.get(key.block);
    if (b === undefined) blockIndex.set(key.block, (b = packed.b.push(key.block) - 1));
    packed.x.push(b);
    if (key.id < lo) lo = key.id;
    if (key.id > hi) hi = key.id;
  }
  return { _id, user_id: userId, provider, id_min: lo, id_max: hi, count: keys.length, data: JSON.stringify(packed) };
}

/** The locators of a run, as main's rows would hold them. */
export function runLocators(run: KeyRunDoc): SampleKeyDoc[] {
  const p = JSON.parse(run.data) as PackedRun;
  const tag = userTag(run.user_id);
  const out: SampleKeyDoc[] = new Array(p.k.length);
  for (let j = 0; j < p.k.length; j++) out[j] = { _id: tag + p.k[j]!, id: p.i[j]!, provider: run.provider, block: p.b[p.x[j]!]! };
  return out;
}

/** A run's `_id`: its number, zero-padded so that the ids sort as the numbers do. */
const runId = (n: number): string => String(n).padStart(12, '0');
/** The runs, without the mark (digits sort before letters). */
export const RUNS: Filter = { _id: { $lt: 'a' } };

/**
 * A row of `sample_key_runs` that is no run: `gen`, a value written anew whenever `sample_keys`
 * gains locators its live writer's filter (RecentLocators.mayBeInMain) may not hold: by a merge,
 * and by a rebuild's replay (replayMark). A filter built or kept at another `gen` is built again.
 */
const MAIN_MARK = 'main';
type MarkDoc = Doc & { gen: string };
/** The mark a rebuild's replay writes (once, with its first locators): every live filter of `sample_keys` is then built again. */
export const replayMark = (): Change & { doc: MarkDoc } => ({ op: 'put', collection: SAMPLE_KEY_RUNS, doc: { _id: MAIN_MARK, gen: randomUUID() } });

/**
 * The tier as the projection keeps it in memory (one per read store): every locator of the runs
 * by `_id`, the later run's winning. It stands for the stored runs only while their count and
 * greatest `_id` are the ones it expects; otherwise (a batch that failed after writing a run, an
 * erasure that deleted runs, a rebuild, another writer) it is read again from the store. The
 * check runs once per batch (`sync` with the batch's `scope`): within a batch, its earlier
 * sessions' runs are not stored yet and are expected. Why a check and not a hook on commit: the
 * same reason as the kept decoded blocks' (decodedBlocks.ts): it needs no cooperation from the
 * runner, the dead letters' replay or the rebuild, and cannot be wrong after a failure nobody
 * reported.
 */
export class RecentLocators {
  private readonly map = new Map<string, Entry>();
  /** How many runs the store holds, and the greatest `_id`, once the batch in `scope` is committed. */
  private runs = 0;
  private last: string | null = null;
  private next = 1;
  private loaded = false;
  private scope: object | null = null;
  /**
   * A Bloom filter holding every `_id` of `sample_keys` (and, wrongly, a few others): a batch's
   * record it does not hold has no locator there, and is not looked up (most of the ingest's
   * records are new; each lookup reads an index page of a hash-keyed index). Only a superset
   * matters: a merge adds its locators before it is committed, an erasure's deletions leave
   * them. Built from `sample_keys` at start and whenever the mark's `gen` is not the one it was
   * built or last merged at (a rebuild, another process's merge, a merge of ours that failed).
   */
  private main: LocatorFilter | null = null;
  private mainGen: string | null = null;
  /**
   * A merge under way: the last run it takes (the runs up to it are deleted once every slice of
   * the keys is in main), the next slice, and how many runs were written after it began.
   */
  private cycleEnd: number | null = null;
  private slice = 0;
  private runsAfter = 0;

  /** Brings the tier up to the store's, unless `scope` (the batch) already did. */
  async sync(readStore: ReadStore, scope: object | undefined): Promise<void> {
    if (scope !== undefined && scope === this.scope) return;
    const [row] = await readStore.aggregate(SAMPLE_KEY_RUNS, { filter: RUNS, groupBy: [], max: ['_id'] });
    const count = row?.count ?? 0;
    const last = count ? (row!.max._id as string) : null;
    if (!this.loaded || count !== this.runs || last !== this.last) await this.reload(readStore);
    const gen = (await readStore.get<MarkDoc>(SAMPLE_KEY_RUNS, MAIN_MARK))?.gen ?? null;
    if (this.main === null || gen !== this.mainGen) {
      const main = new LocatorFilter();
      let after: string[] | undefined;
      for (;;) {
        const rows = await readStore.find(SAMPLE_KEYS, { fields: [], sort: [['_id', 1]], limit: 10_000, after });
        for (const r of rows) main.add(r._id);
        if (rows.length < 10_000) break;
        after = [rows[rows.length - 1]!._id];
      }
      this.main = main;
      this.mainGen = gen;
    }
    this.scope = scope ?? null;
  }

  /** False when `sample_keys` holds no locator of `_id` (sync first). */
  mayBeInMain(id: string): boolean {
    return this.main!.mayHold(id);
  }

  private async reload(readStore: ReadStore): Promise<void> {
    this.map.clear();
    this.runs = 0;
    this.last = null;
    for (const run of await readStore.find<KeyRunDoc>(SAMPLE_KEY_RUNS, { filter: RUNS, sort: [['_id', 1]] })) {
      const n = Number(run._id);
      for (const k of runLocators(run)) this.map.set(k._id, { id: k.id, block: k.block, provider: k.provider, run: n });
      this.runs++;
      this.last = run._id;
    }
    this.next = this.last === null ? 1 : Number(this.last) + 1;
    this.loaded = true;
    // A merge under way starts again: its slices already in main are put there again, unchanged.
    this.cycleEnd = null;
  }

  /** The tier's locator of `_id`, if it has one (it is newer than main's). */
  get(id: string): Entry | undefined {
    return this.map.get(id);
  }

  /**
   * Writes a session's new locators (`owners[j]`: the user of `keys[j]`) to `out`: as runs, one per (user, provider); or, when the tier
   * then passes its limits and `mayMerge` (no erasure in the batch: the merge rewrites the tier's
   * locators into main, and must not write back the ones an erasure of the batch deleted), a
   * slice of the tier into main, sorted by `_id` (by a batch of `mergeFrom` locators or more, or
   * any while the tier is past twice its bounds: recentTierLimits), and with the last slice the
   * runs deleted.
   */
  write(keys: readonly SampleKeyDoc[], owners: readonly string[], mayMerge: boolean, out: Change[]): void {
    if (!keys.length) return;
    const groups = new Map<string, { userId: string; provider: string; keys: SampleKeyDoc[] }>();
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]!;
      const userId = owners[j]!;
      const g = `${userId}\u0000${k.provider}`;
      let group = groups.get(g);
      if (!group) groups.set(g, (group = { userId, provider: k.provider, keys: [] }));
      group.keys.push(k);
    }
    const over = this.map.size + keys.length > recentTierLimits.locators || this.runs + groups.size > recentTierLimits.runs;
    for (const { userId, provider, keys: ks } of groups.values()) {
      const n = this.next++;
      const run = packRun(runId(n), userId, provider, ks);
      out.push({ op: 'put', collection: SAMPLE_KEY_RUNS, doc: run });
      for (const k of ks) this.map.set(k._id, { id: k.id, block: k.block, provider: k.provider, run: n });
      this.runs++;
      if (this.cycleEnd !== null) this.runsAfter++;
      this.last = run._id;
    }
    if (!mayMerge) return;
    if (this.cycleEnd === null && over) {
      this.cycleEnd = this.next - 1;
      this.slice = 0;
      this.runsAfter = 0;
    }
    if (this.cycleEnd === null) return;
    const small = keys.length < recentTierLimits.mergeFrom && this.map.size <= 2 * recentTierLimits.locators && this.runs <= 2 * recentTierLimits.runs;
    if (!small) this.mergeSlice(out);
  }

  /**
   * One slice of a merge: the tier's locators whose key falls in the slice put into main in `_id`
   * order (the newest of each: a locator moved since the merge began is put as it stands now),
   * and, with the last slice, the runs the merge took deleted and their locators dropped from
   * memory (those moved into later runs stay). A locator in main and in a run is harmless: the
   * run's is the same or newer, and wins.
   */
  private mergeSlice(out: Change[]): void {
    const slices = recentTierLimits.slices;
    const ids: string[] = [];
    for (const _id of this.map.keys()) if (sliceOf(_id, slices) === this.slice) ids.push(_id);
    // The default sort compares UTF-16 code units, as `<` does.
    ids.sort();
    for (const _id of ids) {
      const e = this.map.get(_id)!;
      out.push({ op: 'put', collection: SAMPLE_KEYS, doc: { _id, provider: e.provider, id: e.id, block: e.block } satisfies SampleKeyDoc });
      this.main!.add(_id);
    }
    if (++this.slice === slices) {
      const end = this.cycleEnd!;
      // After main's rows: on MongoDB, which applies a batch change by change, a batch cut short
      // leaves every locator in main or still in its run.
      out.push({ op: 'deleteMany', collection: SAMPLE_KEY_RUNS, filter: { _id: { $lte: runId(end) } } });
      for (const [_id, e] of this.map) if (e.run <= end) this.map.delete(_id);
      this.runs = this.runsAfter;
      if (this.last !== null && Number(this.last) <= end) this.last = null;
      this.cycleEnd = null;
    }
    if (ids.length) {
      // Another process's filter (or ours, if this batch fails) does not hold these: a new mark.
      const mark = replayMark();
      out.push(mark);
      this.mainGen = mark.doc.gen;
    }
  }
}

/** The slice of a merge a locator belongs to: by the first character of its record key (after the user's tag), so that every user's locators are spread over the slices. */
const sliceOf = (_id: string, slices: number): number => (slices === 1 ? 0 : _id.charCodeAt(USER_TAG) % slices);

const ofStore = new WeakMap<ReadStore, RecentLocators>();

/** The recent tier kept for `readStore` (one per read store connection, as the kept decoded blocks). */
export function recentLocatorsOf(readStore: ReadStore): RecentLocators {
  let t = ofStore.get(readStore);
  if (!t) ofStore.set(readStore, (t = new RecentLocators()));
  return t;
}

/**
 * Every locator as one set, in `_id` order: main's rows with the tier's over them (a later run's
 * over an earlier one's). What the tiers hold together is a function of the events; how they
 * split it depends on where the merges fell, so a digest or a test comparing a live store with a
 * rebuilt one compares this. Each in one field order, `_id`, `id`, `provider`, `block` (the
 * embedded store's: its index fields, then its columns), whichever tier it came from.
 */
export async function* storedLocators(readStore: ReadStore, page = 5000): AsyncGenerator<SampleKeyDoc> {
  const recent = new Map<string, SampleKeyDoc>();
  for (const run of await readStore.find<KeyRunDoc>(SAMPLE_KEY_RUNS, { filter: RUNS, sort: [['_id', 1]] })) for (const k of runLocators(run)) recent.set(k._id, k);
  const tier = [...recent.values()].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
  let t = 0;
  let after: string[] | undefined;
  for (;;) {
    const rows = await readStore.find<SampleKeyDoc>(SAMPLE_KEYS, { sort: [['_id', 1]], limit: page, after });
    for (const row of rows) {
      while (t < tier.length && tier[t]!._id < row._id) yield tier[t++]!;
      if (t < tier.length && tier[t]!._id === row._id) yield tier[t++]!;
      else yield { _id: row._id, id: row.id, provider: row.provider, block: row.block };
    }
    if (rows.length < page) break;
    after = [rows[rows.length - 1]!._id];
  }
  while (t < tier.length) yield tier[t++]!;
}

/** The block the tier names for a sample of the user by its integer id (the newest run holding it), or null: then main's locator holds. */
export async function recentBlockOfId(readStore: ReadStore, userId: string, id: number): Promise<string | null> {
  const runs = await readStore.find<KeyRunDoc>(SAMPLE_KEY_RUNS, { filter: { user_id: userId, id_min: { $lte: id }, id_max: { $gte: id } }, sort: [['_id', -1]] });
  for (const run of runs) {
    const p = JSON.parse(run.data) as PackedRun;
    const j = p.i.indexOf(id);
    if (j >= 0) return p.b[p.x[j]!]!;
  }
  return null;
}
