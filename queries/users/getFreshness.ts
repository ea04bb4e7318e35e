import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import { latestSampleEnd, userSampleTypes } from '../records/sampleBlocks.js';
import { recordProjections } from '../../projections/index.js';
import type { EtlJobDoc } from '../../projections/ingestion/etlJobsProjection.js';
import type { ProviderKind } from '../../src/catalog/providerFacts.js';
import { providerKind } from '../../src/catalog/providerKinds.js';

/**
 * Freshness of each source of a user (spec "Freshness of a source", contracts §6): one entry per
 * provider the user has data from or a connection with. Computed from read models only: the ETL
 * jobs (queue state, last upload that stored data, last error) and the record collections (end of
 * the latest record). Rules and an example answer: docs/freshness.md.
 */

export type FreshnessState = 'disconnected' | 'needs_reauth' | 'syncing' | 'failing' | 'stale' | 'fresh';

export type FreshnessEntry = {
  provider: string;
  kind: ProviderKind;
  state: FreshnessState;
  synced_through: string | null;
  lag_seconds: number | null;
  last_received_at: string | null;
  last_notification_at: string | null;
  next_pull_at: string | null;
  last_error: string | null;
};

/**
 * What a provider connection adds: its status decides `disconnected` and `needs_reauth` (with the
 * refusal as `last_error`); its pulls (sync runs, queries/sync/syncFacts.ts) join the ETL jobs'
 * progress and failures (`syncing`, `failing`, `last_error`) and give `next_pull_at`,
 * `last_notification_at` and `last_received_at`.
 */
export type ConnectionFacts = {
  provider: string;
  status: 'active' | 'needs_reauth' | 'disconnected';
  last_notification_at: string | null;
  next_pull_at: string | null;
  syncing?: boolean;
  failing?: boolean;
  last_error?: string | null;
  last_received_at?: string | null;
};

/** contracts §6: `stale` when nothing was received for 48 hours. */
export const STALE_AFTER_MS = 48 * 3_600_000;

/** What the state of one provider is decided from. */
export type ProviderFacts = {
  connection: ConnectionFacts['status'] | null;
  /** An ETL job (or pull) of the provider is queued or running, and has not failed since it was queued. */
  syncing: boolean;
  /** A job is parked, or the last attempt of a job waiting for its retry failed. */
  failing: boolean;
  lastReceivedAt: string | null;
};

/** contracts §6, `state`: the first rule that holds. */
export function freshnessState(f: ProviderFacts, nowMs: number): FreshnessState {
  if (f.connection === 'disconnected') return 'disconnected';
  if (f.connection === 'needs_reauth') return 'needs_reauth';
  if (f.syncing) return 'syncing';
  if (f.failing) return 'failing';
  if (f.lastReceivedAt === null || nowMs - Date.parse(f.lastReceivedAt) >= STALE_AFTER_MS) return 'stale';
  return 'fresh';
}

/**
 * The record collections whose records say how far a provider's data reaches, with the field
 * holding a record's end (quantity samples, stored in blocks, are read by latestSampleEnd). Daily summaries (a day total ends at the next midnight, after "now")
 * and menstrual cycles (dates, a cycle spans weeks) are left out.
 */
export const RECORD_ENDS: readonly { collection: string; end: string }[] = [
  { collection: 'category_samples', end: 'end_date' },
  { collection: 'sleep_sessions', end: 'bedtime_end' },
  { collection: 'workouts', end: 'end_date' },
  { collection: 'nutrition', end: 'end_date' },
  { collection: 'ecg_recordings', end: 'end_date' },
  { collection: 'heartbeat_series', end: 'end_date' },
  { collection: 'observations', end: 'end_date' },
];

/** A record counts when it starts on the provider's last day with data or up to this many days before. */
export const LOOKBACK_DAYS = 2;
/** Rows read per collection when the end field is not a column (sleep, workouts: a few a day). */
const MAX_ROWS = 5_000;
/** Open jobs looked at per user (newest first). */
const MAX_OPEN_JOBS = 1_000;
const DAY_MS = 86_400_000;

/** Fields each record collection keeps as columns (declared columns and index fields): only those are aggregated on. */
const columnsOf: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  recordProjections.flatMap((p) =>
    p.collections.map((c) => [c.name, new Set([...(c.columns ?? []), ...(c.indexes ?? []).flatMap((i) => i.fields.map(([f]) => f))])] as const),
  ),
);

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The end of the provider's latest record: the greatest end among its records that start on
 * `lastDay` (the last day an upload of it stored records, `data.written`) or the LOOKBACK_DAYS
 * before. Queries go by the `{user_id, day}` index of each record collection, or for samples by
 * their blocks' `{user_id, type, day}` index, type by type.
 */
export async function latestRecordEnd(readStore: ReadStore, userId: string, provider: string, lastDay: string): Promise<string | null> {
  const from = isoDay(Date.parse(`${lastDay}T00:00:00Z`) - LOOKBACK_DAYS * DAY_MS);
  const filter: Filter = { user_id: userId, provider, day: { $gte: from, $lte: lastDay } };
  let best: number | null = null;
  const consider = (v: unknown) => {
    if (typeof v !== 'string') return;
    const ms = Date.parse(v);
    if (Number.isFinite(ms) && (best === null || ms > best)) best = ms;
  };
  // Samples, per type: the blocks of the same days (a block's day is the UTC date of its samples' starts).
  for await (const type of userSampleTypes(readStore, userId)) consider(await latestSampleEnd(readStore, { userId, type, provider, fromDay: from, toDay: lastDay }));
  for (const { collection, end } of RECORD_ENDS) {
    const columns = columnsOf.get(collection);
    if (!columns) continue; // projection not registered: no such records
    if (columns.has(end)) {
      const rows = await readStore.aggregate(collection, { filter, groupBy: [], max: [end] });
      for (const r of rows) if (r.count > 0) consider(r.max[end]);
    } else {
      const docs = await readStore.find(collection, { filter, sort: [['day', -1]], limit: MAX_ROWS });
      for (const d of docs) consider(d[end]);
    }
  }
  return best === null ? null : iso(best);
}

type JobFacts = { syncing: boolean; failing: boolean; lastError: string | null; lastErrorId: number };

/** One entry per provider, sorted by provider. `now` and `connections` are the caller's. */
export async function getFreshness(
  readStore: ReadStore,
  userId: string,
  opts: { now?: Date; connections?: readonly ConnectionFacts[] } = {},
): Promise<FreshnessEntry[]> {
  const nowMs = (opts.now ?? new Date()).getTime();
  const connections = new Map((opts.connections ?? []).map((c) => [c.provider, c]));

  // Uploads that stored records: the last one's finish, and the last day their records reach.
  const received = new Map<string, { at: string | null; lastDay: string | null }>();
  const stored = await readStore.aggregate('etl_jobs', {
    filter: { user_id: userId, phase: 'done', last_day: { $gte: '0' } },
    groupBy: ['provider'],
    max: ['finished_at', 'last_day'],
  });
  for (const r of stored) {
    const provider = r.group.provider;
    if (typeof provider !== 'string') continue;
    received.set(provider, {
      at: typeof r.max.finished_at === 'string' ? r.max.finished_at : null,
      lastDay: typeof r.max.last_day === 'string' ? r.max.last_day : null,
    });
  }

  // Jobs not done: queued or running (syncing), waiting for a retry after a failure or parked (failing).
  const jobs = new Map<string, JobFacts>();
  const open = await readStore.find<EtlJobDoc>('etl_jobs', {
    filter: { user_id: userId, phase: { $in: ['open', 'parked'] } },
    sort: [['id', -1]],
    limit: MAX_OPEN_JOBS,
  });
  for (const j of open) {
    let f = jobs.get(j.provider);
    if (!f) jobs.set(j.provider, (f = { syncing: false, failing: false, lastError: null, lastErrorId: -1 }));
    // A job waiting out its backoff after a failed attempt is failing, not syncing: its last attempt failed.
    if (j.status === 'parked' || (j.status === 'pending' && j.attempts > 0)) f.failing = true;
    else f.syncing = true;
    // The error of the newest job that failed since it was queued (a retry in progress included).
    if ((j.status === 'parked' || j.attempts > 0) && j.error && j.id > f.lastErrorId) {
      f.lastErrorId = j.id;
      f.lastError = j.error;
    }
  }

  const providers = [...new Set([...received.keys(), ...jobs.keys(), ...connections.keys()])].sort();
  const entries: FreshnessEntry[] = [];
  for (const provider of providers) {
    const r = received.get(provider);
    const j = jobs.get(provider);
    const c = connections.get(provider);
    const lastReceivedAt = latest(r?.at ?? null, c?.last_received_at ?? null);
    const recordEnd = r?.lastDay ? await latestRecordEnd(readStore, userId, provider, r.lastDay) : null;
    // A record of a period still running (a provider's daily summary of today) ends in the future;
    // what was received covers the user's data only up to when it was received.
    const syncedThrough = recordEnd !== null && lastReceivedAt !== null && recordEnd > lastReceivedAt ? lastReceivedAt : recordEnd;
    const failing = (j?.failing ?? false) || (c?.failing ?? false);
    const state = freshnessState(
      { connection: c?.status ?? null, syncing: (j?.syncing ?? false) || (c?.syncing ?? false), failing, lastReceivedAt },
      nowMs,
    );
    entries.push({
      provider,
      // Every slug the contract names is in the table; anything else came through an upload.
      kind: providerKind(provider) ?? 'device',
      state,
      synced_through: syncedThrough,
      lag_seconds: syncedThrough === null ? null : Math.max(0, Math.floor((nowMs - Date.parse(syncedThrough)) / 1000)),
      last_received_at: lastReceivedAt,
      last_notification_at: c?.last_notification_at ?? null,
      next_pull_at: c?.next_pull_at ?? null,
      last_error: j?.lastError ?? c?.last_error ?? null,
    });
  }
  return entries;
}

const latest = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : Date.parse(a) >= Date.parse(b) ? a : b);
