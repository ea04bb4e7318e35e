import { randomUUID } from 'node:crypto';
import type { Change, Doc, Filter, ReadStore } from '../../../src/readstore/readStore.js';
import { isKeyRow, type KeyRowDoc, keyRowEntries, mainLocatorsByTag, mergeIntoKeyRows, sliceOf } from './packedLocators.js';
import { ReplayLocators as LocatorFilter } from './replayLocators.js';
import { SAMPLE_KEYS, type SampleKeyDoc, USER_TAG, userTag } from './sampleBlock.js';
import { TierEntries } from './tierEntries.js';

/**
 * The recent tier of the samples' locators (docs/sample-blocks.md "The locators' recent tier"):
 * the locators the live projection wrote since its last merge, packed into **runs**, one row per
 * (user, provider) of a batch, keyed by an increasing number, never into `sample_keys`' key rows
 * (packedLocators.ts: a (user, provider)'s record keys in order, a thousand to a row). Main holds
 * the rest; a locator in a run is newer than main's of the same `_id`, and a later run's than an
 * earlier one's. When the tier passes its limits (`recentTierLimits`), a merge puts it into main's
 * key rows over the next `slices` batches (`mergeSlice`, a range of the keys each) and then
 * deletes the runs it took: each key row is rewritten about once per merge, where a batch's
 * thousand random keys would each have rewritten a row. The rebuild's replay goes through the
 * tier too. Where a record is (its block family) is not the tier's to answer: the id rows
 * (packedLocators.ts) are written by every batch directly.
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
 * what its tenant waits on, and a slice costs it 50-110 ms (h20/fair). Batches of fewer merge only
 * while the tier is past twice its bounds, so that small uploads alone still merge it.
 * Exported for the tests only, to make a merge happen with a few records.
 */
export const recentTierLimits = { locators: 100_000, runs: 4_000, slices: 16, mergeFrom: 100 };

/**
 * A run: `user_id` and `provider` (an erasure deletes the user's, or the user's and provider's,
 * runs as it deletes every record row), `id_min`/`id_max` (a read by id looks only in the runs
 * whose range holds it), and `data`, the packed locators: `k` the record keys' first characters
 * (locatorId without the user's tag), `i` the ids. Where each record is, the id rows say.
 */
export type KeyRunDoc = Doc & { user_id: string; provider: string; id_min: number; id_max: number; count: number; data: string };
type PackedRun = { k: string[]; i: number[] };
/** A locator as the tier and main's key rows hold it: the record's locator `_id`, its id and provider (where it is, the id rows say). */
export type TierLocator = { _id: string; id: number; provider: string };
/** The key rows a batch's merge slices wrote, by `_id` (null: deleted): a later slice of the same batch reads them, not the store's copy. */
type Written = Map<string, KeyRowDoc | null>;

/** The run doc of locators of one user and provider (their `_id`s start with the user's tag). */
function packRun(_id: string, userId: string, provider: string, keys: readonly TierLocator[]): KeyRunDoc {
  const tagLength = userTag(userId).length;
  const packed: PackedRun = { k: [], i: [] };
  let lo = Infinity;
  let hi = -Infinity;
  for (const key of keys) {
    packed.k.push(key._id.slice(tagLength));
    packed.i.push(key.id);
    if (key.id < lo) lo = key.id;
    if (key.id > hi) hi = key.id;
  }
  return { _id, user_id: userId, provider, id_min: lo, id_max: hi, count: keys.length, data: JSON.stringify(packed) };
}

/** The locators of a run, as main's rows would hold them. */
export function runLocators(run: KeyRunDoc): TierLocator[] {
  const p = JSON.parse(run.data) as PackedRun;
  const tag = userTag(run.user_id);
  const out: TierLocator[] = new Array(p.k.length);
  for (let j = 0; j < p.k.length; j++) out[j] = { _id: tag + p.k[j]!, id: p.i[j]!, provider: run.provider };
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
  private readonly map = new TierEntries();
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
    const gen = (await readStore.get<MarkDoc>(SAMPLE_KEY_RUNS, MAIN_MARK))?.gen ?? null;
    // Another writer's mark (a rebuild's replay, another process's merge) also means other runs,
    // though their count and last number may be the ones expected (a rebuild numbers from 1 again).
    if (!this.loaded || count !== this.runs || last !== this.last || gen !== this.mainGen) await this.reload(readStore);
    if (this.main === null || gen !== this.mainGen) {
      const main = new LocatorFilter();
      let after: string[] | undefined;
      for (;;) {
        const rows = await readStore.find<KeyRowDoc>(SAMPLE_KEYS, { sort: [['_id', 1]], limit: 200, after });
        for (const r of rows) if (isKeyRow(r._id)) for (const { key } of keyRowEntries(r)) main.add(key);
        if (rows.length < 200) break;
        after = [rows[rows.length - 1]!._id];
      }
      this.main = main;
      this.mainGen = gen;
    }
    // A new batch (or a caller without one: each call its own) reads the key rows from the store.
    if (scope === undefined || scope !== this.scope) this.written.clear();
    this.scope = scope ?? null;
  }

  /** The key rows this batch's merge slices wrote (cleared at the next batch's sync). */
  private readonly written: Written = new Map();

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
      for (const k of runLocators(run)) this.map.set(k._id, k.id, k.provider, n);
      this.runs++;
      this.last = run._id;
    }
    this.next = this.last === null ? 1 : Number(this.last) + 1;
    this.loaded = true;
    // A merge under way starts again: its slices already in main are put there again, unchanged.
    this.cycleEnd = null;
  }

  /** The id of the tier's locator of `_id`, if it has one (it is newer than main's). */
  idOf(id: string): number | undefined {
    return this.map.idOf(id);
  }

  /**
   * Writes a session's new locators (`owners[j]`: the user of `keys[j]`) to `out`: as runs, one per (user, provider); or, when the tier
   * then passes its limits and `mayMerge` (no erasure in the batch: the merge rewrites the tier's
   * locators into main, and must not write back the ones an erasure of the batch deleted), a
   * slice of the tier's keys merged into main's key rows (by a batch of `mergeFrom` locators or
   * more, or any while the tier is past twice its bounds: recentTierLimits; all slices at once when
   * `whole`: a rebuild's replay), and with the last slice the runs the merge took deleted.
   */
  async write(readStore: ReadStore, keys: readonly TierLocator[], owners: readonly string[], mayMerge: boolean, out: Change[], whole = false): Promise<void> {
    if (!keys.length) return;
    const groups = new Map<string, { userId: string; provider: string; keys: TierLocator[] }>();
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
      for (const k of ks) this.map.set(k._id, k.id, k.provider, n);
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
    // A rebuild's replay (`whole`) merges every slice at once: its batches are ~20,000 records, and
    // 16 of them written meanwhile left the tier at 400,000-600,000 locators (15.8 B a sample of
    // runs at the end of the 1M rebuild); nobody waits on its batches as tenants do on live ones.
    if (this.cycleEnd === null) return;
    const small = keys.length < recentTierLimits.mergeFrom && this.map.size <= 2 * recentTierLimits.locators && this.runs <= 2 * recentTierLimits.runs;
    if (small && !whole) return;
    do await this.mergeSlice(readStore, out);
    while (whole && this.cycleEnd !== null);
  }

  /**
   * One slice of a merge: the tier's locators whose key falls in the slice put into main in `_id`
   * order (the newest of each: a locator moved since the merge began is put as it stands now),
   * and, with the last slice, the runs the merge took deleted and their locators dropped from
   * memory (those moved into later runs stay). A locator in main and in a run is harmless: the
   * run's is the same or newer, and wins.
   */
  private async mergeSlice(readStore: ReadStore, out: Change[]): Promise<void> {
    const slices = recentTierLimits.slices;
    const ids: string[] = [];
    for (const _id of this.map.keys()) if (sliceOf(_id, slices) === this.slice) ids.push(_id);
    // The default sort compares UTF-16 code units, as `<` does.
    ids.sort();
    // One (user tag, provider)'s locators at a time, each into its key rows of the slice.
    const groups = new Map<string, { tag: string; provider: string; entries: { key: string; id: number }[] }>();
    for (const _id of ids) {
      const e = this.map.entry(_id);
      const tag = _id.slice(0, USER_TAG);
      const g = `${tag}\u0000${e.provider}`;
      let group = groups.get(g);
      if (!group) groups.set(g, (group = { tag, provider: e.provider, entries: [] }));
      group.entries.push({ key: _id, id: e.id });
      this.main!.add(_id);
    }
    for (const { tag, provider, entries } of groups.values()) await mergeIntoKeyRows(readStore, tag, provider, this.slice, slices, entries, this.written, out);
    if (++this.slice === slices) {
      const end = this.cycleEnd!;
      // After main's rows: on MongoDB, which applies a batch change by change, a batch cut short
      // leaves every locator in main or still in its run.
      out.push({ op: 'deleteMany', collection: SAMPLE_KEY_RUNS, filter: { _id: { $lte: runId(end) } } });
      this.map.dropThrough(end);
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


const ofStore = new WeakMap<ReadStore, RecentLocators>();

/** The recent tier kept for `readStore` (one per read store connection, as the kept decoded blocks). */
export function recentLocatorsOf(readStore: ReadStore): RecentLocators {
  let t = ofStore.get(readStore);
  if (!t) ofStore.set(readStore, (t = new RecentLocators()));
  return t;
}

/**
 * Every locator as one set, in `_id` order: main's key rows with the tier's over them (a later
 * run's over an earlier one's), each with the block family the id rows give its id. What the tiers
 * hold together is a function of the events; how they split it depends on where the merges fell,
 * so a digest or a test comparing a live store with a rebuilt one compares this. Each in one field
 * order, `_id`, `id`, `provider`, `block`, whichever tier it came from. One user tag's locators
 * are held at a time (a test and bench helper: a million of one user are about 150 MB).
 */
export async function* storedLocators(readStore: ReadStore): AsyncGenerator<SampleKeyDoc> {
  const recent = new Map<string, Map<string, { id: number; provider: string }>>();
  for (const run of await readStore.find<KeyRunDoc>(SAMPLE_KEY_RUNS, { filter: RUNS, sort: [['_id', 1]] })) {
    for (const k of runLocators(run)) {
      const tag = k._id.slice(0, USER_TAG);
      let m = recent.get(tag);
      if (!m) recent.set(tag, (m = new Map()));
      m.set(k._id, { id: k.id, provider: k.provider });
    }
  }
  const tierTags = [...recent.keys()].sort();
  let t = 0;
  const merged = function* (tag: string, main: { _id: string; id: number; provider: string }[], families: ReadonlyMap<number, string>): Generator<SampleKeyDoc> {
    const all = new Map<string, { id: number; provider: string }>();
    for (const m of main) all.set(m._id, m);
    for (const [k, v] of recent.get(tag) ?? []) all.set(k, v);
    for (const _id of [...all.keys()].sort()) {
      const { id, provider } = all.get(_id)!;
      yield { _id, id, provider, block: families.get(id) ?? '' };
    }
  };
  for await (const { tag, locators, families } of mainLocatorsByTag(readStore)) {
    while (t < tierTags.length && tierTags[t]! < tag) yield* merged(tierTags[t++]!, [], new Map());
    if (t < tierTags.length && tierTags[t] === tag) t++;
    yield* merged(tag, locators, families);
  }
  while (t < tierTags.length) yield* merged(tierTags[t++]!, [], new Map());
}
