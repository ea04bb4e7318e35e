import { PROVIDER_DATA_ERASED, USER_ERASED } from '../../../src/catalog/eventTypes.js';
import type { ProviderDataErased } from '../../../commands/deletions/erasureEvents.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import { boundedInterval, unlistedByMergedView, type Interval } from '../../../src/merge/matchRules.js';
import type { MergeRule } from '../../../src/merge/sampleMergeRule.js';
import type { SourcePriorities } from '../../../src/merge/sourceRanking.js';
import type { Derivation, Projection, Replay } from '../../../src/projector/projection.js';
import type { Change, CollectionSpec, Doc, Filter, ReadStore, UpdateChange } from '../../../src/readstore/readStore.js';
import { instantMs } from '../../../src/shared/isoInstant.js';
import { dayStartMs, utcDayOf } from '../recordDoc.js';
import { addRow, type BatchReach, byNumber, dayRuns, derivationCounts, evaluateSpans, mergedSpans, newReach } from './batchSpans.js';
import { recordsByUser } from './recordsByUser.js';
import type { Member, MemberSession, MergedKind, PartitionSpan } from './mergedKind.js';

export const PRIORITIES_SET = 'source_priorities.set';

export type SourceOrderDoc = Doc & { user_id: string; priorities: SourcePriorities };

const DAY_MS = 86_400_000;
/** A whole-user pass reads about this many rows per window. */
const WINDOW_ROWS = 40_000;
const MAX_WINDOW_DAYS = 366;


export type { Member, MemberSession, MergedKind, PartitionSpan } from './mergedKind.js';

/**
 * The merged view as state: for every record of a kind, whether a better ranked stream has a
 * matching record (`hidden`), kept in the projection's own transaction. A batch re-evaluates only
 * the UTC days its records can affect: around each record's new position and, for a record sent
 * again, its previous one, widened by the rule's reach. A new source order re-evaluates every
 * partition of the user whose order it changes; a provider's erasure every partition of the
 * user, without that provider's records. Flags are written only where they change; a record of
 * the batch gets its flag in its own upsert.
 */
export function mergedFlagsDerivation(kind: MergedKind): Derivation {
  const part = (row: Doc): string => (kind.partitionField ? String(row[kind.partitionField]) : '');
  /** A row's interval, no longer than the rule allows (a longer one predates the ingestion bounds). */
  const interval = (row: Doc, rule: MergeRule): Interval => {
    const startIso = row[kind.startField] as string;
    const start = instantMs(startIso);
    if (!kind.endField) return boundedInterval(start, start + (kind.lengthMs ?? 0), rule.maxSpanMs);
    // An instant (a heart rate, most samples) ends where it starts: its end is not read again.
    const endIso = row[kind.endField] as string;
    return boundedInterval(start, endIso === startIso ? start : instantMs(endIso), rule.maxSpanMs);
  };
  const orderOf = async (readStore: ReadStore, userId: string) => (await readStore.get<SourceOrderDoc>(kind.ordersCollection, userId))?.priorities;
  const open = (readStore: ReadStore, replay?: Replay, batch?: object): MemberSession => (kind.session ?? rowSession)(readStore, kind, replay, batch);

  /** The stored records of a run of days and its margins: every record that can match one of them. */
  const loadRows = (session: MemberSession, userId: string, partition: string, run: readonly string[], rule: MergeRule, erasedProvider?: string): Promise<Map<string, Doc>> => {
    const lo = dayStartMs(run[0]!) - rule.reachMs - rule.lookbackMs;
    const hi = dayStartMs(run[run.length - 1]!) + DAY_MS + rule.reachMs + rule.lookbackMs;
    return session.load(userId, partition, lo, hi, erasedProvider);
  };

  /** Decides the flags of the records starting on `days` (and what onDays derives) from `rows`. */
  const evaluateDays = (session: MemberSession, rows: ReadonlyMap<string, Doc>, run: readonly string[], rule: MergeRule, owner: { userId: string; partition: string }, out: Change[]) => {
    // The run is consecutive days: membership is a range of instants, no date formatting per row.
    const from = dayStartMs(run[0]!);
    const to = dayStartMs(run[run.length - 1]!) + DAY_MS;
    const all: Member[] = [];
    const members: Member[] = [];
    // Whether every row is of one stream (source, body worn, provider): then no row ranks better
    // than another and only the quality flags leave samples out (issue 38: decided for the run,
    // not by a scan around every sample; a day of one source is the common case).
    let first: Member | null = null;
    let oneStream = true;
    for (const r of rows.values()) {
      const { start, end } = interval(r, rule);
      const m: Member = { key: r._id, start, end, source: r.source as string, body_worn: r.body_worn === true, provider: r.provider as string, hidden: false, excluded: r.excluded === true, row: r };
      all.push(m);
      if (start >= from && start < to) members.push(m);
      if (first === null) first = m;
      else if (oneStream && (m.source !== first.source || m.body_worn !== first.body_worn || m.provider !== first.provider)) oneStream = false;
    }
    if (oneStream) {
      for (const m of members) {
        m.hidden = m.excluded;
        session.flag(m.row, m.hidden, out);
      }
    } else {
      const hidden = unlistedByMergedView(members, all, rule.rule, rule.order, rule.lookbackMs);
      for (const m of members) {
        m.hidden = hidden.has(m.key);
        session.flag(m.row, m.hidden, out);
      }
    }
    derivationCounts.built += all.length;
    derivationCounts.decided += members.length;
    kind.onDays?.(owner, run, members, out);
  };

  /** Every day of the user's records of the selected partitions (all when `select` is null), window by window. */
  async function* evaluateUser(session: MemberSession, userId: string, select: ((partition: string) => boolean) | null, priorities: SourcePriorities | undefined, erasedProvider?: string): AsyncGenerator<Change[]> {
    for (const g of await session.partitions(userId)) {
      const partition = g.partition;
      if (g.count === 0 || (select && !select(partition))) continue;
      const rule = kind.rule(partition, priorities);
      const first = utcDayOf(Date.parse(g.first));
      const last = utcDayOf(Date.parse(g.last));
      // Windows sized so one holds about WINDOW_ROWS rows at the partition's average density.
      const spanDays = Math.round((dayStartMs(last) - dayStartMs(first)) / DAY_MS) + 1;
      const windowDays = Math.max(1, Math.min(MAX_WINDOW_DAYS, Math.floor((WINDOW_ROWS * spanDays) / Math.max(1, g.count))));
      const lastMs = dayStartMs(last);
      for (let start: number | null = dayStartMs(first); start !== null && start <= lastMs; ) {
        const run: string[] = [];
        for (let d = 0; d < windowDays && start + d * DAY_MS <= lastMs; d++) run.push(utcDayOf(start + d * DAY_MS));
        const rows = await loadRows(session, userId, partition, run, rule, erasedProvider);
        const changes: Change[] = [];
        evaluateDays(session, rows, run, rule, { userId, partition }, changes);
        await session.flush(changes);
        yield changes;
        // Days without a stored record hold nothing to evaluate: the next window starts at the
        // next record, so years between records cost one query, not one per window.
        const next = await session.nextStart(userId, partition, start + run.length * DAY_MS);
        start = next === null ? null : dayStartMs(utcDayOf(Date.parse(next)));
      }
    }
  }

  /**
   * Stages `records` (the batch's upserts of one user) in `session` and decides the flags of the
   * days they can affect, into `out`; false when nothing was staged (the session has nothing to flush).
   */
  async function evaluateBatch(session: MemberSession, records: Change[], erased: ReadonlySet<string>, readStore: ReadStore, orders: Map<string, SourcePriorities | undefined>, out: Change[]): Promise<boolean> {
    const staged = await session.stage(records, erased);
    if (!staged.length) return false;

    // Days are counted from the epoch here; reach and lookback do not depend on the order.
    const touched = new Map<string, BatchReach>();
    const reach = new Map<string, MergeRule>();
    // The batch's records where they will stand, and (a record sent again may have moved) where they stood.
    // The (user, partition) and the days of the row before: a batch's rows come in runs of them.
    let t: BatchReach | undefined;
    let r: MergeRule | undefined;
    let firstDay = NaN;
    let lastDay = NaN;
    for (const row of staged) {
      const userId = row.user_id as string;
      const partition = part(row);
      if (t === undefined || t.userId !== userId || t.partition !== partition) {
        const k = `${userId}\u0000${partition}`;
        t = touched.get(k);
        if (!t) touched.set(k, (t = newReach(userId, partition)));
        r = reach.get(partition);
        if (!r) reach.set(partition, (r = kind.rule(partition, undefined)));
        firstDay = lastDay = NaN;
      }
      // Bounded by the rule, whatever the row claims: a few days for anything but a state.
      const { start, end } = interval(row, r!);
      if (kind.onQuarters) {
        addRow(t, row, { start, end }, r!);
        continue;
      }
      const from = Math.floor((start - r!.reachMs - r!.lookbackMs) / DAY_MS);
      const to = Math.floor((end + r!.reachMs) / DAY_MS);
      if (from === firstDay && to === lastDay) continue;
      firstDay = from;
      lastDay = to;
      for (let d = from; d <= to; d++) t.days.add(d);
    }

    for (const t of touched.values()) {
      const { userId, partition, days } = t;
      if (!orders.has(userId)) orders.set(userId, await orderOf(readStore, userId));
      const rule = kind.rule(partition, orders.get(userId));
      if (kind.onQuarters) {
        // Only the spans the batch's rows can change (batchSpans.ts); each span lies in one run of days.
        const spans = mergedSpans(t.spans);
        for (const run of dayRuns([...days].sort(byNumber))) {
          const from = dayStartMs(run[0]!);
          const to = dayStartMs(run[run.length - 1]!) + DAY_MS;
          const mine: number[] = [];
          for (let i = 0; i < spans.length; i += 2) if (spans[i]! >= from && spans[i]! < to) mine.push(spans[i]!, spans[i + 1]!);
          if (!mine.length) continue;
          const rows = await session.load(userId, partition, mine[0]! - rule.reachMs - rule.lookbackMs, mine[mine.length - 1]! + rule.reachMs + rule.lookbackMs);
          await evaluateSpans(session, readStore, kind, rows, t, mine, rule, out);
        }
        continue;
      }
      for (const run of dayRuns([...days].sort(byNumber))) {
        evaluateDays(session, await loadRows(session, userId, partition, run, rule), run, rule, { userId, partition }, out);
      }
    }
    return true;
  }

  return {
    isBarrier: (e) => e.type === PRIORITIES_SET || e.type === PROVIDER_DATA_ERASED,
    folds: kind.session ? kind.collection : undefined,

    async *derive(events, evolved, readStore, replay) {
      const batch = {};
      const only = events.length === 1 ? events[0]! : null;
      if (only?.type === PRIORITIES_SET) {
        const d = only.data as { user_id: string; priorities: SourcePriorities };
        const before = await orderOf(readStore, d.user_id);
        const changed = (p: string) => kind.rule(p, before).order.join('\u0000') !== kind.rule(p, d.priorities).order.join('\u0000');
        yield* evaluateUser(open(readStore, replay, batch), d.user_id, changed, d.priorities);
        return;
      }
      if (only?.type === PROVIDER_DATA_ERASED) {
        // The batch's own deleteMany drops that provider's records; what remains is evaluated
        // without them (a worse source's record they hid is listed again).
        const d = only.data as ProviderDataErased['data'];
        yield* evaluateUser(open(readStore, replay, batch), d.user_id, null, await orderOf(readStore, d.user_id), d.provider);
        return;
      }
      const erased = new Set<string>();
      for (const e of events) if (e.type === USER_ERASED) erased.add((e.data as { user_id: string }).user_id);
      // One user at a time, each in a session of its own: a session holds what it loaded (a
      // block session: every decoded day) until its flush, and users share nothing the merged
      // view reads. Staged together, a batch of a few hundred phones' one-line uploads, each
      // joining a day of thousands of samples, held all their days at once and ran the
      // projector thread out of heap (BENCHMARKS.md, issue 37, H14-D). One chunk at the end
      // still: the batch's changes go into its own transaction, after its evolved ones.
      const changes: Change[] = [];
      const orders = new Map<string, SourcePriorities | undefined>();
      for (const records of recordsByUser(evolved, kind.collection, kind.session !== undefined)) {
        const session = open(readStore, replay, batch);
        if (await evaluateBatch(session, records, erased, readStore, orders, changes)) await session.flush(changes);
      }
      if (changes.length) yield changes;
    },

    async *rebuildAll(readStore) {
      const session = open(readStore);
      for (const userId of await session.users()) yield* evaluateUser(session, userId, null, await orderOf(readStore, userId));
    },
  };
}

/**
 * One row per record in `kind.collection`, the batch's records upserted by evolve: their rows
 * are read as the batch leaves them (each a copy of its upsert's fields), and a batch record's
 * flag goes into its own upsert rather than a second write.
 */
function rowSession(readStore: ReadStore, kind: MergedKind): MemberSession {
  return new RowSession(readStore, kind);
}

/**
 * rowSession's session per batch and user: methods, not closures made per session, so V8
 * optimises them once (blockSession.ts says why).
 */
class RowSession implements MemberSession {
  private readonly fields: string[];
  private readonly upserts = new Map<string, UpdateChange>();

  constructor(
    private readonly readStore: ReadStore,
    private readonly kind: MergedKind,
  ) {
    this.fields = ['user_id', 'tenant_id', kind.startField, ...(kind.endField ? [kind.endField] : []), ...(kind.partitionField ? [kind.partitionField] : []), 'source', 'body_worn', 'provider', 'hidden', 'excluded', ...(kind.extraFields ?? [])];
  }

  private partitionFilter(partition: string): Filter {
    return this.kind.partitionField ? { [this.kind.partitionField]: partition } : {};
  }

  async stage(evolved: Change[], erased: ReadonlySet<string>): Promise<Doc[]> {
    const { kind, upserts } = this;
    for (const c of evolved) {
      if (c.op !== 'update' || c.collection !== kind.collection || !c.set || !c.upsert) continue;
      if (erased.has(c.set.user_id as string)) continue;
      upserts.set(c.id, c);
    }
    const rows: Doc[] = [];
    for (const c of upserts.values()) rows.push(c.set as Doc);
    const keys = [...upserts.keys()];
    for (let i = 0; i < keys.length; i += 500) {
      for (const old of await this.readStore.find(kind.collection, { filter: { _id: { $in: keys.slice(i, i + 500) } }, fields: this.fields })) if (!erased.has(old.user_id as string)) rows.push(old);
    }
    return rows;
  }

  async load(userId: string, partition: string, lo: number, hi: number, erasedProvider?: string): Promise<Map<string, Doc>> {
    const kind = this.kind;
    const found = await this.readStore.find(kind.collection, {
      filter: {
        user_id: userId,
        ...this.partitionFilter(partition),
        [kind.startField]: { $gte: new Date(lo).toISOString(), $lt: new Date(hi).toISOString() },
        ...(erasedProvider !== undefined ? { provider: { $ne: erasedProvider } } : {}),
      },
      fields: this.fields,
    });
    const rows = new Map<string, Doc>();
    for (const r of found) rows.set(r._id, r);
    // The batch's own records as they will stand after it: added, replaced, or moved away.
    // A row is a shallow copy of its upsert's fields: reading through to them with
    // Object.create made every upsert a prototype, which V8 re-shapes (slow, profiled).
    for (const [key, c] of this.upserts) {
      const set = c.set!;
      if (set.user_id !== userId) continue;
      if ((kind.partitionField ? String(set[kind.partitionField]) : '') !== partition) {
        rows.delete(key);
        continue;
      }
      rows.set(key, { ...set, _id: key, hidden: rows.get(key)?.hidden ?? false });
    }
    return rows;
  }

  async partitions(userId: string): Promise<PartitionSpan[]> {
    const kind = this.kind;
    const groups = await this.readStore.aggregate(kind.collection, { filter: { user_id: userId }, groupBy: kind.partitionField ? [kind.partitionField] : [], min: [kind.startField], max: [kind.startField] });
    // An aggregate without groups answers one row even over no rows.
    const out: PartitionSpan[] = [];
    for (const g of groups) out.push({ partition: kind.partitionField ? String(g.group[kind.partitionField]) : '', count: g.count, first: g.min[kind.startField] as string, last: g.max[kind.startField] as string });
    return out;
  }

  async nextStart(userId: string, partition: string, from: number): Promise<string | null> {
    const kind = this.kind;
    const [next] = await this.readStore.find(kind.collection, {
      filter: { user_id: userId, ...this.partitionFilter(partition), [kind.startField]: { $gte: new Date(from).toISOString() } },
      sort: kind.startOrder ?? [[kind.startField, 1], ['id', 1]],
      limit: 1,
      fields: [kind.startField],
    });
    return next ? (next[kind.startField] as string) : null;
  }

  async users(): Promise<string[]> {
    const out: string[] = [];
    for (const u of await this.readStore.aggregate(this.kind.collection, { groupBy: ['user_id'] })) out.push(u.group.user_id as string);
    return out;
  }

  flag(row: Doc, hidden: boolean, out: Change[]): void {
    const up = this.upserts.get(row._id);
    if (up) up.set!.hidden = hidden;
    else if ((row.hidden === true) !== hidden) out.push({ op: 'update', collection: this.kind.collection, id: row._id, set: { hidden } });
  }

  flush(): void {}
}

/**
 * A record projection with the merged view kept as state: the kind's rows get `hidden`, the
 * projection keeps the user's source order (`source_priorities.set`) in `kind.ordersCollection`,
 * and its derivation keeps the flags (and whatever `onDays` derives, in `extraCollections`).
 */
export function withMergedView(projection: Projection, kind: MergedKind, extraCollections: readonly CollectionSpec[] = []): Projection {
  const derived = [...extraCollections, { name: kind.ordersCollection, indexes: [] }];
  return {
    ...projection,
    collections: [...projection.collections, ...derived],
    eventTypes: [...projection.eventTypes, PRIORITIES_SET],
    evolve: (event: RecordedEvent, sequence: number): readonly Change[] => {
      if (event.type === PRIORITIES_SET) {
        const d = event.data as { user_id: string; priorities: SourcePriorities };
        return [{ op: 'put', collection: kind.ordersCollection, doc: { _id: d.user_id, user_id: d.user_id, priorities: d.priorities } }];
      }
      const changes = projection.evolve(event, sequence);
      // Every stored record carries its flag, listed until the derivation decides otherwise (in
      // the same batch when live; in its pass after the replay when rebuilding), so a rebuild
      // stores exactly what the live projection stored.
      for (const c of changes) if (c.op === 'update' && c.upsert && c.collection === kind.collection) (c.set ??= {}).hidden = false;
      if (event.type === USER_ERASED) {
        const userId = (event.data as { user_id: string }).user_id;
        return [...changes, ...derived.map((c): Change => ({ op: 'deleteMany', collection: c.name, filter: { user_id: userId } }))];
      }
      return changes;
    },
    derive: mergedFlagsDerivation(kind),
  };
}
