import { PROVIDER_DATA_ERASED, type ProviderDataErased } from '../../../commands/deletions/erasureEvents.js';
import { hiddenByBetterSource } from '../../../src/merge/matchRules.js';
import { sampleMergeRule, type MergeRule } from '../../../src/merge/sampleMergeRule.js';
import type { SourcePriorities } from '../../../src/merge/sourceRanking.js';
import type { Derivation } from '../../../src/projector/projection.js';
import type { Change, Doc, ReadStore, UpdateChange } from '../../../src/readstore/readStore.js';
import { dayStartMs, rollupDay, SAMPLE_ROLLUPS, utcDayOf } from './dayRollup.js';

export const SAMPLES = 'samples';
/** The user's source order as the samples projection last saw it (`source_priorities.set`). */
export const SAMPLE_SOURCE_ORDERS = 'sample_source_orders';
export const PRIORITIES_SET = 'source_priorities.set';
const USER_ERASED = 'user.erased';

export type SourceOrderDoc = Doc & { user_id: string; priorities: SourcePriorities };

const DAY_MS = 86_400_000;
/** What the merged flags and rollups read of a stored sample. */
const ROW_FIELDS = ['user_id', 'tenant_id', 'type', 'start_date', 'end_date', 'value', 'unit', 'source', 'body_worn', 'provider', 'ingested_at', 'hidden'] as const;

type Row = {
  _id: string;
  user_id: string;
  tenant_id: string;
  type: string;
  start_date: string;
  end_date: string;
  value: number;
  unit: string;
  source: string;
  body_worn: boolean;
  provider: string;
  ingested_at: string;
  hidden?: boolean;
};

/** A whole-user pass reads about this many rows per window. */
const WINDOW_ROWS = 40_000;
const MAX_WINDOW_DAYS = 366;

/**
 * The merged view's flag on every sample (`hidden`: a better ranked source has a matching
 * record) and the statistics rollups of every day (dayRollup.ts), kept in the samples
 * projection's transaction. A batch re-evaluates only the days its records can affect: the days
 * around each record's new and previous position within the type's match reach. A new source
 * order re-evaluates every type of the user whose effective order changed; a provider's erasure
 * every type of the user, without that provider's samples.
 */
export const samplesDerivation: Derivation = {
  isBarrier: (e) => e.type === PRIORITIES_SET || e.type === PROVIDER_DATA_ERASED,

  async *derive(events, evolved, readStore) {
    const barrier = events.length === 1 && events[0]!.type === PRIORITIES_SET ? (events[0]!.data as { user_id: string; priorities: SourcePriorities }) : null;
    if (barrier) {
      yield* reorderUser(readStore, barrier.user_id, barrier.priorities);
      return;
    }
    const erasure = events.length === 1 && events[0]!.type === PROVIDER_DATA_ERASED ? (events[0]!.data as ProviderDataErased['data']) : null;
    if (erasure) {
      // The batch's own deleteMany drops that provider's samples; every type of the user is
      // evaluated without them (a worse source's sample they hid is listed again).
      const priorities = (await readStore.get<SourceOrderDoc>(SAMPLE_SOURCE_ORDERS, erasure.user_id))?.priorities;
      yield* evaluateUser(readStore, erasure.user_id, null, priorities, erasure.provider);
      return;
    }
    const erased = new Set(events.filter((e) => e.type === USER_ERASED).map((e) => (e.data as { user_id: string }).user_id));
    const upserts = new Map<string, UpdateChange>();
    for (const c of evolved) {
      if (c.op !== 'update' || c.collection !== SAMPLES || !c.set) continue;
      if (erased.has(c.set.user_id as string)) continue;
      upserts.set(c.id, c);
    }
    if (!upserts.size) return;

    const touched = new Map<string, { userId: string; type: string; days: Set<string> }>();
    const touch = (userId: string, type: string, start: string, end: string) => {
      const k = `${userId}\u0000${type}`;
      let t = touched.get(k);
      if (!t) touched.set(k, (t = { userId, type, days: new Set() }));
      const r = sampleMergeRule(type);
      for (let d = utcDayOf(Date.parse(start) - r.reachMs - r.lookbackMs), last = utcDayOf(Date.parse(end) + r.reachMs); d <= last; d = utcDayOf(dayStartMs(d) + DAY_MS)) t.days.add(d);
    };
    for (const c of upserts.values()) touch(c.set!.user_id as string, c.set!.type as string, c.set!.start_date as string, c.set!.end_date as string);
    // A record sent again may have moved: the days it left are re-evaluated too.
    for (const old of await findByIds<Row>(readStore, [...upserts.keys()], ['user_id', 'type', 'start_date', 'end_date'])) {
      if (!erased.has(old.user_id)) touch(old.user_id, old.type, old.start_date, old.end_date);
    }

    const orders = new Map<string, SourcePriorities | undefined>();
    const changes: Change[] = [];
    for (const { userId, type, days } of touched.values()) {
      if (!orders.has(userId)) orders.set(userId, (await readStore.get<SourceOrderDoc>(SAMPLE_SOURCE_ORDERS, userId))?.priorities);
      const rule = sampleMergeRule(type, orders.get(userId));
      for (const run of dayRuns([...days].sort())) {
        const rows = await loadRows(readStore, userId, type, run, rule);
        overlay(rows, upserts, userId, type);
        evaluateDays(rows, new Set(run), rule, { userId, type }, upserts, changes);
      }
    }
    yield changes;
  },

  async *rebuildAll(readStore) {
    const users = await readStore.aggregate(SAMPLES, { groupBy: ['user_id'] });
    for (const u of users) {
      const userId = u.group.user_id as string;
      const priorities = (await readStore.get<SourceOrderDoc>(SAMPLE_SOURCE_ORDERS, userId))?.priorities;
      yield* evaluateUser(readStore, userId, null, priorities);
    }
  },
};

/** A new order: every type of the user whose effective order it changes. */
async function* reorderUser(readStore: ReadStore, userId: string, priorities: SourcePriorities): AsyncGenerator<Change[]> {
  const before = (await readStore.get<SourceOrderDoc>(SAMPLE_SOURCE_ORDERS, userId))?.priorities;
  const changed = (type: string) => sampleMergeRule(type, before).order.join('\u0000') !== sampleMergeRule(type, priorities).order.join('\u0000');
  yield* evaluateUser(readStore, userId, changed, priorities);
}

/** Every day of the user's samples of the selected types (all when `select` is null), window by window. */
async function* evaluateUser(
  readStore: ReadStore,
  userId: string,
  select: ((type: string) => boolean) | null,
  priorities: SourcePriorities | undefined,
  erasedProvider?: string,
): AsyncGenerator<Change[]> {
  const types = await readStore.aggregate(SAMPLES, { filter: { user_id: userId }, groupBy: ['type'], min: ['start_date'], max: ['start_date'] });
  for (const t of types) {
    const type = t.group.type as string;
    if (select && !select(type)) continue;
    const rule = sampleMergeRule(type, priorities);
    const first = utcDayOf(Date.parse(t.min.start_date as string));
    const last = utcDayOf(Date.parse(t.max.start_date as string));
    // Windows sized so one holds about WINDOW_ROWS rows at the type's average density.
    const spanDays = Math.round((dayStartMs(last) - dayStartMs(first)) / DAY_MS) + 1;
    const windowDays = Math.max(1, Math.min(MAX_WINDOW_DAYS, Math.floor((WINDOW_ROWS * spanDays) / Math.max(1, t.count))));
    for (let start = dayStartMs(first); start <= dayStartMs(last); start += windowDays * DAY_MS) {
      const run: string[] = [];
      for (let d = 0; d < windowDays && start + d * DAY_MS <= dayStartMs(last); d++) run.push(utcDayOf(start + d * DAY_MS));
      const rows = await loadRows(readStore, userId, type, run, rule, erasedProvider);
      const changes: Change[] = [];
      evaluateDays(rows, new Set(run), rule, { userId, type }, null, changes);
      yield changes;
    }
  }
}

/** Consecutive days of a sorted list, as runs. */
function dayRuns(days: readonly string[]): string[][] {
  const runs: string[][] = [];
  for (const d of days) {
    const run = runs[runs.length - 1];
    if (run && dayStartMs(d) - dayStartMs(run[run.length - 1]!) === DAY_MS) run.push(d);
    else runs.push([d]);
  }
  return runs;
}

/** The stored samples of a run of days and of its margins (every record that can match one of them). */
async function loadRows(readStore: ReadStore, userId: string, type: string, run: readonly string[], rule: MergeRule, erasedProvider?: string): Promise<Map<string, Row>> {
  const lo = dayStartMs(run[0]!) - rule.reachMs - rule.lookbackMs;
  const hi = dayStartMs(run[run.length - 1]!) + DAY_MS + rule.reachMs + rule.lookbackMs;
  const rows = await readStore.find<Row>(SAMPLES, {
    filter: {
      user_id: userId,
      type,
      start_date: { $gte: new Date(lo).toISOString(), $lt: new Date(hi).toISOString() },
      ...(erasedProvider !== undefined ? { provider: { $ne: erasedProvider } } : {}),
    },
    fields: ROW_FIELDS,
  });
  return new Map(rows.map((r) => [r._id, r]));
}

/** The batch's own records as they will stand after it: added, replaced, or moved away. */
function overlay(rows: Map<string, Row>, upserts: ReadonlyMap<string, UpdateChange>, userId: string, type: string): void {
  for (const [key, c] of upserts) {
    const set = c.set!;
    if (set.user_id !== userId) continue;
    if (set.type === type) rows.set(key, { ...(set as unknown as Row), _id: key, hidden: rows.get(key)?.hidden ?? false });
    else rows.delete(key);
  }
}

/**
 * Decides the merged flags of the samples starting on `days` and the rollups of those days, from
 * `rows` (those samples and every one that can match them). A flag of one of the batch's own
 * records goes into its upsert; another record's flag is written only when it changes.
 */
function evaluateDays(
  rows: ReadonlyMap<string, Row>,
  days: ReadonlySet<string>,
  rule: MergeRule,
  owner: { userId: string; type: string },
  upserts: ReadonlyMap<string, UpdateChange> | null,
  out: Change[],
): void {
  const all = [...rows.values()].map((r) => ({ key: r._id, start: Date.parse(r.start_date), end: Date.parse(r.end_date), source: r.source, body_worn: r.body_worn, provider: r.provider, row: r }));
  const members = all.filter((x) => days.has(utcDayOf(x.start)));
  const hidden = hiddenByBetterSource(members, all, rule.rule, rule.order);
  const byDay = new Map<string, { startMs: number; value: number; provider: string; source: string; unit: string; ingested_at: string; hidden: boolean }[]>();
  let tenantId = '';
  for (const m of members) {
    const h = hidden.has(m.key);
    const up = upserts?.get(m.key);
    if (up) up.set!.hidden = h;
    else if ((m.row.hidden ?? false) !== h) out.push({ op: 'update', collection: SAMPLES, id: m.key, set: { hidden: h } });
    const day = utcDayOf(m.start);
    let list = byDay.get(day);
    if (!list) byDay.set(day, (list = []));
    list.push({ startMs: m.start, value: m.row.value, provider: m.row.provider, source: m.row.source, unit: m.row.unit, ingested_at: m.row.ingested_at, hidden: h });
    tenantId = m.row.tenant_id;
  }
  const sorted = [...days].sort();
  out.push({ op: 'deleteMany', collection: SAMPLE_ROLLUPS, filter: { user_id: owner.userId, type: owner.type, day: { $gte: sorted[0]!, $lte: sorted[sorted.length - 1]! } } });
  for (const [day, samples] of byDay) {
    for (const doc of rollupDay({ user_id: owner.userId, tenant_id: tenantId, type: owner.type, day }, samples)) out.push({ op: 'put', collection: SAMPLE_ROLLUPS, doc });
  }
}

async function findByIds<T extends Doc>(readStore: ReadStore, ids: readonly string[], fields: readonly string[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += 500) out.push(...(await readStore.find<T>(SAMPLES, { filter: { _id: { $in: ids.slice(i, i + 500) } }, fields })));
  return out;
}

