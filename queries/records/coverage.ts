import { UNFINISHED } from '../../commands/sync/syncRun.js';
import { SYNC_RUNS } from '../../projections/sync/syncRunsProjection.js';
import { OPEN_JOBS } from '../../projections/ingestion/etlJobsProjection.js';
import type { AggregateRow, Filter, ReadStore } from '../../src/readstore/readStore.js';
import { REJECTED_RECORDS } from '../../projections/ingestion/rejectedRecordsProjection.js';
import { SAMPLE_ROLLUPS } from '../../projections/records/sampleRollups/dayRollup.js';
import { DAY_COUNT_FIELD } from '../../projections/records/sampleRollups/rollupLayout.js';
import { mergedFilter, type View } from './view.js';
import type { Window } from './window.js';

/**
 * Spec "Coverage report" and "Reads" rule 3: per provider per day, how many records are stored
 * and of which metrics, plus the ETL queue's state for the user.
 *
 * Choices the spec leaves open:
 * - a record's day is its row's `day` (projections/records/recordDoc.ts: the UTC date of its
 *   start; a daily summary's own date); `start`/`end` select days: a day is in the window when
 *   it is on or after the day of `start` and its midnight (UTC) is before `end`;
 * - `metrics` maps a sample's or category sample's type, and for other kinds the collection
 *   name (sleep_sessions, workouts, …), to its record count; `records` is their sum;
 * - with view `merged` only records the merged view lists are counted, by the same flag the
 *   lists read (so coverage and lists always agree); a day whose records are all hidden stays
 *   listed with `records: 0`, since it matched and was synced. `last_synced_at` is the latest
 *   `ingested_at` of the provider's records of that day in either view;
 * - `pending_jobs` and `parked_jobs` take the provider filter (not the dates: a job has no day);
 *   `rejected_records` counts every provider and day (spec);
 * - records whose quality flags leave them out (contracts §15: implausible_value,
 *   implausible_duration, future) are counted with view `all` (they are stored and listed there)
 *   and not with `merged` (it does not list them); `flagged_records` counts them over every
 *   provider and day, whatever the filters, as `rejected_records` does. pending_jobs counts ETL jobs and
 *   provider pulls (sync runs queued, running, or waiting for a retry or a rate limit);
 * - a "day" of the 10000-day limit is one entry of `days` (one provider, one date).
 */
export const MAX_COVERAGE_DAYS = 10_000;

const DAY_MS = 86_400_000;

type CountQuery = { userId: string; view: View; providerFilter: Filter; days: Filter[string] | null };

export type CoverageCollection = {
  collection: string;
  /** Field holding the record's day, YYYY-MM-DD. */
  dayField: string;
  /** Field naming the metric (samples, category samples); otherwise the collection name is the metric. */
  metricField?: string;
  /** The kind has a merged view (its rows carry the `hidden` flag). */
  merged?: boolean;
  /** Counts kept by the kind's projection, read instead of the rows: each handed to `add` as it is read. */
  counters?: (readStore: ReadStore, q: CountQuery, add: (row: CountRow) => void) => Promise<void>;
  /** The user's records left out by their quality flags, from what the projection keeps; default: rows with `excluded`. */
  flagged?: (readStore: ReadStore, userId: string) => Promise<number>;
};

/** Records of one metric of one provider on one day. */
export type CountRow = { date: string; provider: string; metric: string; count: number; last: string };

const rowKey = (date: unknown, provider: unknown, metric: unknown) => `${date}\u0000${provider}\u0000${metric}`;

/**
 * Samples are counted from the rollups the samples projection keeps (a row per series, day and
 * view, with the day's count): one row per series and day instead of one per
 * sample. `last_synced_at` is taken from the full view, whichever view counts.
 */
async function sampleCounters(readStore: ReadStore, q: CountQuery, add: (row: CountRow) => void): Promise<void> {
  const read = (view: View, each: (r: AggregateRow) => void) =>
    readStore.aggregateEach(
      SAMPLE_ROLLUPS,
      {
        filter: { user_id: q.userId, view, ...q.providerFilter, ...(q.days ? { day: q.days } : {}) },
        groupBy: ['day', 'provider', 'type'],
        sum: [DAY_COUNT_FIELD, FLAGGED],
        max: ['last_ingested_at'],
      },
      each,
    );
  let listed: Map<string, number> | null = null;
  if (q.view === 'merged') {
    const counts = new Map<string, number>();
    await read('merged', (r) => counts.set(rowKey(r.group.day, r.group.provider, r.group.type), r.sum[DAY_COUNT_FIELD] ?? 0));
    listed = counts;
  }
  await read('all', (r) =>
    add({
      date: String(r.group.day),
      provider: String(r.group.provider),
      metric: String(r.group.type),
      // The `all` rollup leaves flagged samples out of its statistics and counts them beside.
      count: listed ? (listed.get(rowKey(r.group.day, r.group.provider, r.group.type)) ?? 0) : (r.sum[DAY_COUNT_FIELD] ?? 0) + (r.sum[FLAGGED] ?? 0),
      last: String(r.max.last_ingested_at ?? ''),
    }),
  );
}
const FLAGGED = 'flagged';

/** Samples left out by their quality flags: the `flagged` counts of the user's `all` rollups (a row per series and day). */
async function flaggedSamples(readStore: ReadStore, userId: string): Promise<number> {
  const [r] = await readStore.aggregate(SAMPLE_ROLLUPS, { filter: { user_id: userId, view: 'all' }, groupBy: [], sum: [FLAGGED] });
  return r?.sum[FLAGGED] ?? 0;
}

/** Any other kind: its rows grouped by day, provider and metric, through the `(user_id, day)` index. */
async function rowCounts(readStore: ReadStore, c: CoverageCollection, q: CountQuery, add: (row: CountRow) => void): Promise<void> {
  const read = (filter: Filter, each: (r: AggregateRow) => void) =>
    readStore.aggregateEach(
      c.collection,
      {
        filter: { user_id: q.userId, ...q.providerFilter, ...(q.days ? { [c.dayField]: q.days } : {}), ...filter },
        groupBy: [c.dayField, 'provider', ...(c.metricField ? [c.metricField] : [])],
        max: ['ingested_at'],
      },
      each,
    );
  const metricOf = (g: Record<string, unknown>) => (c.metricField ? String(g[c.metricField]) : c.collection);
  let listed: Map<string, number> | null = null;
  if (q.view === 'merged' && c.merged) {
    const counts = new Map<string, number>();
    await read(mergedFilter('merged'), (r) => counts.set(rowKey(r.group[c.dayField], r.group.provider, metricOf(r.group)), r.count));
    listed = counts;
  }
  await read({}, (r) => {
    const date = r.group[c.dayField];
    const provider = r.group.provider;
    if (typeof date !== 'string' || typeof provider !== 'string') return;
    const metric = metricOf(r.group);
    const last = r.max.ingested_at;
    add({ date, provider, metric, count: listed ? (listed.get(rowKey(date, provider, metric)) ?? 0) : r.count, last: typeof last === 'string' ? last : '' });
  });
}

/**
 * Every record collection, named here so a collection that does not exist (its projection not
 * registered) simply counts 0. The kinds with a merged view (spec "Merged view": samples,
 * category samples, sleep, workouts, daily summaries) count what it lists in view `merged`.
 */
export const COVERAGE_COLLECTIONS: readonly CoverageCollection[] = [
  { collection: 'samples', dayField: 'day', metricField: 'type', merged: true, counters: sampleCounters, flagged: flaggedSamples },
  { collection: 'category_samples', dayField: 'day', metricField: 'type', merged: true },
  { collection: 'sleep_sessions', dayField: 'day', merged: true },
  { collection: 'workouts', dayField: 'day', merged: true },
  { collection: 'nutrition', dayField: 'day' },
  { collection: 'ecg_recordings', dayField: 'day' },
  { collection: 'heartbeat_series', dayField: 'day' },
  { collection: 'daily_summaries', dayField: 'day', merged: true },
  { collection: 'menstrual_cycles', dayField: 'day' },
  { collection: 'observations', dayField: 'day' },
];

export type CoverageQuery = { userId: string; provider?: string; window: Window; view: View };

export type CoverageDay = { provider: string; date: string; records: number; metrics: Record<string, number>; last_synced_at: string };

export type CoverageReport = {
  pending_jobs: number;
  parked_jobs: number;
  rejected_records: number;
  /** Records stored but left out of the merged view and statistics by their quality flags (contracts §15). */
  flagged_records: number;
  truncated: boolean;
  days: CoverageDay[];
};

const entryKey = (date: string, provider: string) => `${date}\u0000${provider}`;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Days in the window: from the day of start, up to and including the day holding the instant before end. */
export function dayCondition(w: Window): { $gte?: string; $lt?: string } | null {
  if (w.start === null && w.end === null) return null;
  return {
    ...(w.start !== null ? { $gte: isoDay(w.start) } : {}),
    // A day is in when its midnight is before end: end at midnight excludes that day.
    ...(w.end !== null ? { $lt: isoDay(w.end + DAY_MS - 1) } : {}),
  };
}

export async function coverageReport(
  readStore: ReadStore,
  q: CoverageQuery,
  opts: { maxDays?: number; collections?: readonly CoverageCollection[] } = {},
): Promise<CoverageReport> {
  const maxDays = opts.maxDays ?? MAX_COVERAGE_DAYS;
  const collections = opts.collections ?? COVERAGE_COLLECTIONS;
  const providerFilter: Filter = q.provider !== undefined ? { provider: q.provider } : {};

  const [pending, pulls, parked, rejected] = await Promise.all([
    readStore.count('etl_jobs', { user_id: q.userId, ...OPEN_JOBS, ...providerFilter }),
    readStore.count(SYNC_RUNS, { user_id: q.userId, status: { $in: [...UNFINISHED] }, ...providerFilter }),
    readStore.count('etl_jobs', { user_id: q.userId, phase: 'parked', ...providerFilter }),
    readStore.count(REJECTED_RECORDS, { user_id: q.userId }),
  ]);
  let flagged = 0;
  for (const c of collections) flagged += c.flagged ? await c.flagged(readStore, q.userId) : await readStore.count(c.collection, { user_id: q.userId, excluded: true });

  const days = dayCondition(q.window);
  // Each day is built as its groups come, in the form it is answered: nothing per group outlives it.
  const entries = new Map<string, CoverageDay>();
  const add = (r: CountRow) => {
    const k = entryKey(r.date, r.provider);
    let d = entries.get(k);
    if (!d) entries.set(k, (d = { provider: r.provider, date: r.date, records: 0, metrics: {}, last_synced_at: '' }));
    // A metric is listed once it counts a record: one whose records the merged view all hides is left out.
    if (r.count > 0) {
      d.metrics[r.metric] = (d.metrics[r.metric] ?? 0) + r.count;
      d.records += r.count;
    }
    if (r.last > d.last_synced_at) d.last_synced_at = r.last;
  };
  const countQuery: CountQuery = { userId: q.userId, view: q.view, providerFilter, days };
  // Each group is folded into its day as it is read: the groups of a long window (tens of
  // thousands for years of samples) are never all alive at once (issue 38, docs/memory.md).
  for (const c of collections) await (c.counters ? c.counters(readStore, countQuery, add) : rowCounts(readStore, c, countQuery, add));

  const sorted = [...entries.values()].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0));
  const truncated = sorted.length > maxDays;
  const kept = truncated ? sorted.slice(0, maxDays) : sorted;

  return {
    pending_jobs: pending + pulls,
    parked_jobs: parked,
    rejected_records: rejected,
    flagged_records: flagged,
    truncated,
    days: kept,
  };
}
