import { hash } from 'node:crypto';
import type { Replay } from '../../../src/projector/projection.js';
import type { Change, Doc, ReadStore, UpdateChange } from '../../../src/readstore/readStore.js';
import type { MemberSession, PartitionSpan } from '../mergedView/mergedFlags.js';
import { instantMs } from '../../../src/shared/isoInstant.js';
import { utcDayOf } from '../recordDoc.js';
import { DAY_MS, daysBetween, type Need, needOf, want } from './batchDays.js';
import { type DecodedBlocks, decodedBlocksOf } from './decodedBlocks.js';
import { familyBlocks, familyIn, idRowId, idRowPut, idsInMain, readIdRows, setFamily } from './packedLocators.js';
import { type RecentLocators, recentLocatorsOf, replayMark, type TierLocator } from './recentLocators.js';
import { BLOCK_SAMPLES, bySampleStart, encodeBlock, listedCount, locatorId, SAMPLE_BLOCKS, type SampleBlockDoc, type SampleDoc, userTag } from './sampleBlock.js';

/** Groups groupOf compares before it looks a key up. */
const RECENT_GROUPS = 4;

/**
 * The samples of one (user, type, provider, source, UTC day): stored as blocks `<base>.0`,
 * `<base>.1`, … of BLOCK_SAMPLES samples each in (start, id) order. The cut depends only on the
 * group's samples, never on the order they came in, so a rebuild stores the blocks the live
 * projection stored.
 */
type Group = {
  base: string;
  owner: Pick<SampleBlockDoc, 'user_id' | 'tenant_id' | 'type' | 'provider' | 'source' | 'day'>;
  samples: SampleDoc[];
  /** The stored blocks, in order: each one's samples as decoded (objects compared by identity). */
  stored: SampleDoc[][];
  /** Each stored block's `data`, as read. */
  data: string[];
  /** Each stored block's `_id`. */
  ids: string[];
  dirty: boolean;
};

/** `_id` prefix of a group's blocks: 16 characters of SHA-256 of its stream and type, then its day. */
const groupBase = (userId: string, type: string, provider: string, source: string, day: string): string =>
  `${hash('sha256', `${userId}\u0000${type}\u0000${provider}\u0000${source}`, 'base64url').slice(0, 16)}.${day}`;
const groupKey = (userId: string, type: string, provider: string, source: string, day: string) => `${userId}\u0000${type}\u0000${provider}\u0000${source}\u0000${day}`;
const dayKey = (userId: string, type: string, day: string) => `${userId}\u0000${type}\u0000${day}`;

/**
 * The samples projection's records as the merged view's derivation sees them (mergedFlags.ts),
 * stored as blocks (docs/sample-blocks.md): the blocks of every UTC day it reads are decoded
 * whole and kept until `flush`, the batch's records (evolve's upserts of `folded`, taken out of
 * the batch) are moved into the blocks they belong to, flags are set on the decoded samples, and
 * `flush` writes each changed block whole, once, with the locators of the samples whose block
 * family (`<series hash>.<day>`) changed: their id rows patched (packedLocators.ts), and their keys
 * to the recent tier (recentLocators.ts: runs in append order, merged into `sample_keys`' key rows
 * a slice at a time), live and in a rebuild's replay alike. `batch`: the derive call's (one per
 * batch), for the tier's check against the store once per batch.
 */
export function blockSession(readStore: ReadStore, folded: string, replay?: Replay, batch?: object): MemberSession {
  return new BlockSession(readStore, folded, replay ?? null, batch);
}

/**
 * One batch's (one user's) session. Its code is the class's methods and module-level functions,
 * never closures made per session: V8 keeps a function's optimised code only while a function
 * object using it lives, so the closures of a session per user and batch were optimised again
 * after the projector's mark-compacts, about two thirds of TurboFan's work in the ingest
 * (BENCHMARKS.md, issue 38, h16/gc and h17/compile).
 */
class BlockSession implements MemberSession {
  private readonly groups = new Map<string, Group>();
  /** The groups groupOf answered last (at most RECENT_GROUPS), cleared with `groups`. */
  private readonly recentGroups: Group[] = [];
  /** Groups of each loaded (user, type, day). */
  private readonly days = new Map<string, Group[]>();
  /**
   * Where the batch's records are: the decoded copy of each (its group), and the batch's own
   * sample once staged. Only the batch's records: a live batch decodes days of thousands of
   * samples for a thousand records, and a map entry for every decoded sample cost more than the
   * rest of their bookkeeping (issue 38, H16-C). A flag changed on another sample finds its
   * group by its owner fields (groupOfSample).
   */
  private readonly where = new Map<string, Placed>();
  /** The batch's record keys, while `stage` decodes: the samples `where` holds. */
  private batchKeys: ReadonlySet<string> = new Set();
  /**
   * Second copies of a record found while decoding: only a batch cut short on MongoDB, which
   * applies a batch change by change, leaves one (its new block stored, its old block not yet
   * rewritten). The batch runs again and a record it holds leaves every copy.
   */
  private readonly copies = new Map<string, Placed[]>();
  private readonly changed = new Set<SampleDoc>();
  /** Samples that left their group in this session: dropped from it when it is read or written (a splice each would cost the group's length). */
  private readonly left = new Set<SampleDoc>();
  /** Blocks decoded by the batches before this one (decodedBlocks.ts). */
  private readonly decoded: DecodedBlocks;
  /** The locators' recent tier. */
  private readonly recent: RecentLocators;
  /** The id rows of the batch's records, decoded (read in `stage`, patched by `writeGroup`), and the ones patched. */
  private readonly idRows = new Map<string, { provider: string | null; data: Parameters<typeof setFamily>[0] }>();
  private readonly idRowsChanged = new Set<string>();
  /** The batch's record keys whose locator the tier or main holds (their key and id stay as they are). */
  private readonly located = new Set<string>();
  /** Whether this session's locators may merge the tier into main: it staged a batch without an erasure. */
  private mayMerge = false;

  constructor(
    private readonly readStore: ReadStore,
    private readonly folded: string,
    /** A rebuild's replay. */
    private readonly replay: Replay | null,
    private readonly batch: object | undefined,
  ) {
    this.decoded = decodedBlocksOf(readStore);
    this.recent = recentLocatorsOf(readStore);
  }

  async stage(evolved: Change[], erased: ReadonlySet<string>): Promise<Doc[]> {
    const { readStore, decoded, where, copies } = this;
    // The batch's upserts of the folded collection, in log order, merged per record: a later
    // one replaces the fields (each carries all of them), the first one's id stays.
    for (const userId of erased) decoded.forget(userId);
    const batch = new Map<string, { set: Record<string, unknown>; id: number; day: string }>();
    let kept = 0;
    for (const c of evolved) {
      if (c.collection !== this.folded) {
        evolved[kept++] = c;
        continue;
      }
      const up = c as UpdateChange;
      if (up.op !== 'update' || !up.set || erased.has(up.set.user_id as string)) continue;
      const before = batch.get(up.id);
      batch.set(up.id, { set: up.set, id: before?.id ?? (up.setOnInsert!.id as number), day: '' });
    }
    evolved.length = kept;
    if (!batch.size) return [];
    const recent = this.recent;
    await recent.sync(readStore, this.batch);
    this.mayMerge = erased.size === 0;

    // Where the records sent before are: their ids from the recent tier (newer than main's) or
    // main's key rows (only those its filter may hold: most records are new), then each id's
    // block family from its id row; the families' days are loaded, so each record leaves its old block.
    // A locator's `_id` is derived from the user and the record key (locatorId).
    const keyOf = new Map<string, string>();
    const inMain = new Map<string, string>();
    const firstIds = new Map<string, number>();
    for (const [key, { set }] of batch) {
      const k = locatorId(set.user_id as string, key);
      keyOf.set(k, key);
      const r = recent.idOf(k);
      if (r !== undefined) firstIds.set(key, r);
      else if (recent.mayBeInMain(k)) inMain.set(k, set.provider as string);
    }
    if (inMain.size) for (const [k, id] of await idsInMain(readStore, inMain)) firstIds.set(keyOf.get(k)!, id);
    for (const key of firstIds.keys()) this.located.add(key);
    const rowIds = new Set<string>();
    for (const [key, { set, id }] of batch) rowIds.add(idRowOf(set, firstIds.get(key) ?? id));
    for (const [id, row] of await readIdRows(readStore, [...rowIds])) this.idRows.set(id, row);
    const families = new Set<string>();
    for (const [key, { set }] of batch) {
      const first = firstIds.get(key);
      if (first === undefined) continue;
      const f = familyIn(this.idRows.get(idRowOf(set, first))!.data, first);
      if (f !== null) families.add(f);
    }
    const need = new Map<string, Need>();
    for (const f of families) {
      const [b] = await readStore.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter: { _id: familyBlocks(f) }, fields: ['user_id', 'type', 'day'], limit: 1 });
      if (b) want(need, b.user_id, b.type, b.day);
    }
    // Each record's day once (its group's below too), and the days it needs by (user, type).
    let last: Need | undefined;
    for (const entry of batch.values()) {
      const set = entry.set;
      entry.day = utcDayOf(instantMs(set.start_date as string));
      if (last === undefined || last.userId !== set.user_id || last.type !== set.type) last = needOf(need, set.user_id as string, set.type as string);
      last.days.add(entry.day);
    }
    // Every copy of a batch record lies on a day loaded here: its locator's block's, or (MongoDB,
    // a batch cut short) its new start's. Days loaded later (the rule's reach) hold none.
    this.batchKeys = new Set(batch.keys());
    for (const n of need.values()) await this.ensureDays(n.userId, n.type, [...n.days]);
    this.batchKeys = new Set();

    const staged: Doc[] = [];
    for (const [key, { set, id, day }] of batch) {
      const old = where.get(key);
      if (old) {
        this.remove(old.group, old.sample);
        staged.push(old.sample as unknown as Doc);
      }
      const others = copies.get(key);
      if (others) {
        for (const copy of others) {
          this.remove(copy.group, copy.sample);
          staged.push(copy.sample as unknown as Doc);
        }
      }
      // A record its locator names but no block holds (MongoDB: its old block rewritten, its new
      // one not yet stored when the batch was cut short) keeps the id the locator carries.
      // Evolve's `set` is this batch's own fresh object (every attempt evolves again): it becomes
      // the sample, its fields in the order a spread of it gave, without a copy of ~27 fields.
      set.id = old?.sample.id ?? firstIds.get(key) ?? id;
      set._id = key;
      // A record found only while decoding (MongoDB, a batch cut short) may carry an id whose row was not read.
      const row = idRowOf(set, set.id as number);
      if (!this.idRows.has(row)) for (const [rid, r] of await readIdRows(readStore, [row])) this.idRows.set(rid, r);
      const sample = set as unknown as SampleDoc;
      const g = this.groupOf(sample.user_id, sample.tenant_id, sample.type, sample.provider, sample.source, day);
      // Not noted in `changed` nor `where`: a new sample object is in no stored block (its
      // group is rewritten, sameUnchanged), and a session stages one batch (nothing reads
      // `where` after this loop). A million Set and Map entries of a rebuild fewer.
      g.samples.push(sample);
      g.dirty = true;
      staged.push(sample as unknown as Doc);
    }
    return staged;
  }

  async load(userId: string, type: string, lo: number, hi: number, erasedProvider?: string): Promise<Map<string, Doc>> {
    // A whole user's re-evaluation (a source order, a provider's erasure) stages nothing, and may
    // still write a locator (the tier's numbering must be the store's).
    await this.recent.sync(this.readStore, this.batch);
    const wanted = daysBetween(lo, hi);
    if (erasedProvider !== undefined) this.decoded.forget(userId, erasedProvider);
    await this.ensureDays(userId, type, wanted);
    const from = new Date(lo).toISOString();
    const to = new Date(hi).toISOString();
    const rows = new Map<string, Doc>();
    const left = this.left;
    for (const d of wanted) {
      for (const g of this.days.get(dayKey(userId, type, d))!) {
        if (g.owner.provider === erasedProvider) continue;
        for (const s of g.samples) if (s.start_date >= from && s.start_date < to && !left.has(s)) rows.set(s._id, s as unknown as Doc);
      }
    }
    return rows;
  }

  async partitions(userId: string): Promise<PartitionSpan[]> {
    const spans = await this.readStore.aggregate(SAMPLE_BLOCKS, { filter: { user_id: userId }, groupBy: ['type'], sum: ['count'], min: ['start_min'], max: ['start_max'] });
    const out: PartitionSpan[] = [];
    for (const g of spans) out.push({ partition: String(g.group.type), count: g.sum.count ?? 0, first: g.min.start_min as string, last: g.max.start_max as string });
    return out;
  }

  async nextStart(userId: string, type: string, from: number): Promise<string | null> {
    const [next] = await this.readStore.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter: { user_id: userId, type, day: { $gte: utcDayOf(from) } }, sort: [['day', 1], ['start_min', 1], ['_id', 1]], limit: 1, fields: ['start_min'] });
    return next ? next.start_min : null;
  }

  async users(): Promise<string[]> {
    const out: string[] = [];
    for (const u of await this.readStore.aggregate(SAMPLE_BLOCKS, { groupBy: ['user_id'] })) out.push(u.group.user_id as string);
    return out;
  }

  flag(row: Doc, hidden: boolean): void {
    if ((row.hidden === true) === hidden) return;
    row.hidden = hidden;
    this.changed.add(row as unknown as SampleDoc);
    this.groupOfSample(row as unknown as SampleDoc).dirty = true;
  }

  async flush(out: Change[]): Promise<void> {
    // Every block before any locator: on MongoDB a batch cut short leaves a prefix of its
    // changes, and a locator naming a new block would hide the old block's copy from the rerun.
    const locators: TierLocator[] = [];
    const owners: string[] = [];
    for (const g of this.groups.values()) {
      if (g.dirty) this.writeGroup(g, out, locators, owners);
      else for (let i = 0; i < g.stored.length; i++) this.decoded.keep(`${g.base}.${i}`, g.data[i]!, g.stored[i]!);
    }
    for (const id of this.idRowsChanged) {
      const row = this.idRows.get(id)!;
      out.push(idRowPut(id, row.provider!, row.data));
    }
    // Once per replay: the live projection's filter of sample_keys (recentLocators.ts) is then built again.
    if (this.replay && locators.length && !marked.has(this.replay)) {
      marked.add(this.replay);
      out.push(replayMark());
    }
    await this.recent.write(this.readStore, locators, owners, this.mayMerge, out, this.replay !== null);
    this.idRows.clear();
    this.idRowsChanged.clear();
    this.located.clear();
    this.groups.clear();
    this.recentGroups.length = 0;
    this.days.clear();
    this.where.clear();
    this.copies.clear();
    this.changed.clear();
    this.left.clear();
  }

  /** The group of (user, type, provider, source, day), created (empty, listed under its loaded day) when new. */
  private groupOf(userId: string, tenantId: string, type: string, provider: string, source: string, day: string): Group {
    // A batch's records come a few streams interleaved (a phone's export: heart rate of two
    // sources and steps, minute by minute): the groups found last are compared field by field
    // before a key is written and looked up.
    const recent = this.recentGroups;
    for (let i = 0; i < recent.length; i++) {
      const o = recent[i]!.owner;
      if (o.day === day && o.source === source && o.type === type && o.provider === provider && o.user_id === userId) return recent[i]!;
    }
    const k = groupKey(userId, type, provider, source, day);
    let g = this.groups.get(k);
    if (!g) {
      g = { base: groupBase(userId, type, provider, source, day), owner: { user_id: userId, tenant_id: tenantId, type, provider, source, day }, samples: [], stored: [], data: [], ids: [], dirty: false };
      this.groups.set(k, g);
      this.days.get(dayKey(userId, type, day))!.push(g);
    }
    if (recent.length === RECENT_GROUPS) recent.shift();
    recent.push(g);
    return g;
  }

  /** Decodes every block of the user's type on `wanted` days not loaded yet. */
  private async ensureDays(userId: string, type: string, wanted: readonly string[]): Promise<void> {
    const { days, where, copies, batchKeys } = this;
    const missing: string[] = [];
    for (const d of wanted) if (!days.has(dayKey(userId, type, d))) missing.push(d);
    if (!missing.length) return;
    for (const d of missing) days.set(dayKey(userId, type, d), []);
    // Consecutive days as one range of the (user, type, day) index; scattered ones by list.
    const sorted = missing.sort();
    const consecutive = Date.parse(sorted[sorted.length - 1]!) - Date.parse(sorted[0]!) === (sorted.length - 1) * DAY_MS;
    const dayFilter = consecutive ? { $gte: sorted[0]!, $lte: sorted[sorted.length - 1]! } : { $in: sorted };
    const blocks = await this.readStore.find<SampleBlockDoc>(SAMPLE_BLOCKS, { filter: { user_id: userId, type, day: dayFilter }, sort: [['day', 1], ['start_min', 1], ['_id', 1]] });
    blocks.sort(byDayThenIndex);
    for (const b of blocks) {
      const g = this.groupOf(b.user_id, b.tenant_id, b.type, b.provider, b.source, b.day);
      const { samples, data } = this.decoded.take(b._id, b.data);
      g.stored.push(samples);
      g.data.push(data);
      g.ids.push(b._id);
      for (const s of samples) {
        g.samples.push(s);
        if (!batchKeys.has(s._id)) continue;
        const first = where.get(s._id);
        if (first) {
          const list = copies.get(s._id);
          if (list) list.push(first);
          else copies.set(s._id, [first]);
        }
        where.set(s._id, { group: g, sample: s });
      }
    }
  }

  private remove(g: Group, s: SampleDoc): void {
    this.left.add(s);
    g.dirty = true;
  }

  /** The group a loaded sample belongs to (the batch's own too): its key fields and the UTC day of its start. */
  private groupOfSample(s: SampleDoc): Group {
    const g = this.groups.get(groupKey(s.user_id, s.type, s.provider, s.source, utcDayOf(instantMs(s.start_date))));
    if (!g) throw new Error(`sample ${s._id} is in no loaded group`);
    return g;
  }

  /** The group's blocks as its samples now cut them: the blocks that changed put whole, the ones left over deleted. */
  private writeGroup(g: Group, out: Change[], locators: TierLocator[], owners: string[]): void {
    const { left, changed, decoded } = this;
    // A sample stored in any block of the group keeps its locator: a locator names the block
    // family (`<base>`), so the cut moving samples between the day's blocks writes none.
    const inFamily = new Set<SampleDoc>();
    for (const stored of g.stored) for (const s of stored) inFamily.add(s);
    if (left.size) {
      const kept: SampleDoc[] = [];
      for (const s of g.samples) if (!left.has(s)) kept.push(s);
      g.samples = kept;
    }
    g.samples.sort(bySampleStart);
    const count = Math.ceil(g.samples.length / BLOCK_SAMPLES);
    for (let i = 0; i < count; i++) {
      const chunk = g.samples.slice(i * BLOCK_SAMPLES, (i + 1) * BLOCK_SAMPLES);
      const before = g.stored[i];
      const _id = `${g.base}.${i}`;
      if (before && sameUnchanged(chunk, before, changed)) {
        decoded.keep(_id, g.data[i]!, before);
        continue;
      }
      const tenant = chunk[0]!.tenant_id;
      const doc: SampleBlockDoc = {
        _id,
        ...g.owner,
        tenant_id: tenant,
        start_min: chunk[0]!.start_date,
        start_max: chunk[chunk.length - 1]!.start_date,
        count: chunk.length,
        listed: listedCount(chunk),
        data: encodeBlock(chunk),
      };
      out.push({ op: 'put', collection: SAMPLE_BLOCKS, doc });
      // A replay's batches are large and its blocks written about once (1M samples: 1,536 block
      // writes), so only the day it ends on is read again, by the next batch: kept as they are, the
      // batch's samples spare a compact copy of every sample of the rebuild (docs/rebuild.md).
      if (this.replay) decoded.keep(_id, doc.data, chunk);
      else decoded.keepWritten(_id, doc.data, chunk, inFamily);
      for (const s of chunk) {
        if (inFamily.has(s)) continue;
        // New to the family (a new record, or one sent again that moved from another): its id row
        // names the family, and its key goes to the recent tier (the same key and id if it was there).
        // Written only where it changes: a record sent again into its family keeps both.
        const rowId = idRowId(userTag(g.owner.user_id), s.provider, s.id);
        const row = this.idRows.get(rowId);
        if (!row) throw new Error(`no id row read for sample ${s.id}`);
        if (familyIn(row.data, s.id) !== g.base) {
          row.provider = s.provider;
          setFamily(row.data, s.id, g.base);
          this.idRowsChanged.add(rowId);
        }
        if (this.located.has(s._id)) continue;
        locators.push({ _id: locatorId(g.owner.user_id, s._id), provider: s.provider, id: s.id });
        owners.push(g.owner.user_id);
      }
    }
    for (let i = count; i < g.stored.length; i++) out.push({ op: 'delete', collection: SAMPLE_BLOCKS, id: `${g.base}.${i}` });
  }
}

/** The id row (packedLocators.ts) of a batch record's id: a module function, not a closure per batch (the class's comment). */
const idRowOf = (set: Record<string, unknown>, id: number): string => idRowId(userTag(set.user_id as string), set.provider as string, id);

/** The replays that wrote their mark of sample_keys (replayMark). */
const marked = new WeakSet<Replay>();

/** A record of the batch where a session found it: its group and its sample there. */
type Placed = { group: Group; sample: SampleDoc };
/** True when `chunk` is the samples of `before`, in order, none of them changed. */
function sameUnchanged(chunk: readonly SampleDoc[], before: readonly SampleDoc[], changed: ReadonlySet<SampleDoc>): boolean {
  if (before.length !== chunk.length) return false;
  for (let j = 0; j < chunk.length; j++) if (chunk[j] !== before[j] || changed.has(chunk[j]!)) return false;
  return true;
}

/** Blocks by day, then in `_id` order within a group: `<base>.<i>` sorts by i while i < 10; compare numerically. */
function byDayThenIndex(a: SampleBlockDoc, b: SampleBlockDoc): number {
  return a.day < b.day ? -1 : a.day > b.day ? 1 : blockIndex(a._id) - blockIndex(b._id);
}

const blockIndex = (id: string): number => Number(id.slice(id.lastIndexOf('.') + 1));
