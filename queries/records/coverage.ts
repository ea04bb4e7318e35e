import type { Doc, Filter, ReadStore, Scalar } from '../../src/readstore/readStore.js';
import { REJECTED_RECORDS } from '../../projections/ingestion/rejectedRecordsProjection.js';
import type { Page, PageRequest } from '../shared/page.js';
import { listCategorySamples } from './listCategorySamples.js';
import { listDailySummaries } from './listDailySummaries.js';
import { SAMPLE_ROLLUPS } from '../../projections/records/sampleRollups/dayRollup.js';
import { DAY_GROUP, groupColumns } from '../../projections/records/sampleRollups/rollupLayout.js';
import { listSleepSessions } from './listSleep.js';
import { listWorkouts } from './listWorkouts.js';
import type { View } from './mergedPage.js';
import type { SourcePriorities } from '../../src/merge/sourceRanking.js';
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
 * - with view `merged` only records the merged view lists are counted, decided by the kind's
 *   own list query (so coverage and lists always agree); a day whose records are all hidden
 *   stays listed with `records: 0`, since it matched and was synced. `last_synced_at` is the
 *   latest `ingested_at` of the provider's records of that day in either view;
 * - `pending_jobs` and `parked_jobs` take the provider filter (not the dates: a job has no day);
 *   `rejected_records` counts every provider and day (spec). Provider pulls do not exist yet, so
 *   pending_jobs counts ETL jobs only;
 * - a "day" of the 10000-day limit is one entry of `days` (one provider, one date).
 */
export const MAX_COVERAGE_DAYS = 10_000;

const DAY_MS = 86_400_000;

/** One page of the kind's list in the merged view, of one metric, starts in [window.start, window.end). */
type ListMerged = (readStore: ReadStore, q: { userId: string; metric: string; window: Window; priorities?: SourcePriorities }, page: PageRequest) => Promise<Page<Doc>>;

export type CoverageCollection = {
  collection: string;
  /** Field holding the record's day, YYYY-MM-DD. */
  dayField: string;
  /** Field naming the metric (samples, category samples); otherwise the collection name is the metric. */
  metricField?: string;
  /** The kind's list in the merged view; absent: the kind has no merged view and every record counts. */
  listMerged?: ListMerged;
  /** Counts kept by the kind's projection, in the requested view: read instead of the rows. */
  counters?: (readStore: ReadStore, q: { userId: string; view: View; providerFilter: Filter; days: Filter[string] | null }) => Promise<CountRow[]>;
};

/** Records of one metric of one provider on one day. */
export type CountRow = { date: string; provider: string; metric: string; count: number; last: string };

/**
 * Samples are counted from the rollups the samples projection keeps (a row per series, day and
 * view; `p23c` is the day's count): one row per series and day instead of one per sample.
 * `last_synced_at` is taken from the full view, whichever view counts.
 */
async function sampleCounters(readStore: ReadStore, q: { userId: string; view: View; providerFilter: Filter; days: Filter[string] | null }): Promise<CountRow[]> {
  const read = (view: View) =>
    readStore.aggregate(SAMPLE_ROLLUPS, {
      filter: { user_id: q.userId, view, ...q.providerFilter, ...(q.days ? { day: q.days } : {}) },
      groupBy: ['day', 'provider', 'type'],
      sum: [DAY_COUNT],
      max: ['last_ingested_at'],
    });
  const all = await read('all');
  const listed = q.view === 'merged' ? new Map((await read('merged')).map((r) => [`${r.group.day}\u0000${r.group.provider}\u0000${r.group.type}`, r.sum[DAY_COUNT] ?? 0])) : null;
  return all.map((r) => {
    const k = `${r.group.day}\u0000${r.group.provider}\u0000${r.group.type}`;
    return { date: String(r.group.day), provider: String(r.group.provider), metric: String(r.group.type), count: listed ? (listed.get(k) ?? 0) : (r.sum[DAY_COUNT] ?? 0), last: String(r.max.last_ingested_at ?? '') };
  });
}
const DAY_COUNT = groupColumns(DAY_GROUP)[0]!;

const withPriorities = (p?: SourcePriorities) => (p ? { priorities: p } : {});

/**
 * Every record collection, named here so a collection that does not exist (its projection not
 * registered) simply counts 0. The kinds with a merged view (spec "Merged view": samples,
 * category samples, sleep, workouts, daily summaries) count through their list queries.
 */
export const COVERAGE_COLLECTIONS: readonly CoverageCollection[] = [
  {
    collection: 'samples',
    dayField: 'day',
    metricField: 'type',
    counters: sampleCounters,
  },
  {
    collection: 'category_samples',
    dayField: 'day',
    metricField: 'type',
    listMerged: (rs, q, page) => listCategorySamples(rs, { userId: q.userId, type: q.metric, window: q.window, view: 'merged', ...withPriorities(q.priorities) }, page),
  },
  {
    collection: 'sleep_sessions',
    dayField: 'day',
    listMerged: (rs, q, page) => listSleepSessions(rs, { userId: q.userId, window: q.window, view: 'merged', ...withPriorities(q.priorities) }, page),
  },
  {
    collection: 'workouts',
    dayField: 'day',
    listMerged: (rs, q, page) => listWorkouts(rs, { userId: q.userId, window: q.window, view: 'merged', ...withPriorities(q.priorities) }, page),
  },
  { collection: 'nutrition', dayField: 'day' },
  { collection: 'ecg_recordings', dayField: 'day' },
  { collection: 'heartbeat_series', dayField: 'day' },
  {
    collection: 'daily_summaries',
    dayField: 'day',
    listMerged: (rs, q, page) => listDailySummaries(rs, { userId: q.userId, window: q.window, view: 'merged', ...withPriorities(q.priorities) }, page),
  },
  { collection: 'menstrual_cycles', dayField: 'day' },
  { collection: 'observations', dayField: 'day' },
];

export type CoverageQuery = { userId: string; provider?: string; window: Window; view: View; priorities?: SourcePriorities };

export type CoverageDay = { provider: string; date: string; records: number; metrics: Record<string, number>; last_synced_at: string };

export type CoverageReport = {
  pending_jobs: number;
  parked_jobs: number;
  rejected_records: number;
  truncated: boolean;
  days: CoverageDay[];
};

type Entry = { date: string; provider: string; last: string; counts: Map<string, number> };

const entryKey = (date: string, provider: string) => `${date}\u0000${provider}`;
/** Metric counts are kept per collection, so the merged view can replace one collection's counts. */
const countKey = (collection: string, metric: string) => `${collection}\u0000${metric}`;
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
  opts: { maxDays?: number; collections?: readonly CoverageCollection[]; chunk?: number } = {},
): Promise<CoverageReport> {
  const maxDays = opts.maxDays ?? MAX_COVERAGE_DAYS;
  const collections = opts.collections ?? COVERAGE_COLLECTIONS;
  const providerFilter: Filter = q.provider !== undefined ? { provider: q.provider } : {};

  const [pending, parked, rejected] = await Promise.all([
    readStore.count('etl_jobs', { user_id: q.userId, status: { $in: ['pending', 'running'] }, ...providerFilter }),
    readStore.count('etl_jobs', { user_id: q.userId, status: 'parked', ...providerFilter }),
    readStore.count(REJECTED_RECORDS, { user_id: q.userId }),
  ]);

  const days = dayCondition(q.window);
  const entries = new Map<string, Entry>();
  const add = (c: CoverageCollection, r: CountRow) => {
    const k = entryKey(r.date, r.provider);
    let e = entries.get(k);
    if (!e) entries.set(k, (e = { date: r.date, provider: r.provider, last: '', counts: new Map() }));
    const ck = countKey(c.collection, r.metric);
    e.counts.set(ck, (e.counts.get(ck) ?? 0) + r.count);
    if (r.last > e.last) e.last = r.last;
  };
  for (const c of collections) {
    if (c.counters) {
      for (const r of await c.counters(readStore, { userId: q.userId, view: q.view, providerFilter, days })) add(c, r);
      continue;
    }
    const rows = await readStore.aggregate(c.collection, {
      filter: { user_id: q.userId, ...providerFilter, ...(days ? { [c.dayField]: days } : {}) },
      groupBy: [c.dayField, 'provider', ...(c.metricField ? [c.metricField] : [])],
      max: ['ingested_at'],
    });
    for (const r of rows) {
      const date = r.group[c.dayField];
      const provider = r.group.provider;
      if (typeof date !== 'string' || typeof provider !== 'string') continue;
      const last = r.max.ingested_at;
      add(c, { date, provider, metric: c.metricField ? String(r.group[c.metricField]) : c.collection, count: r.count, last: typeof last === 'string' ? last : '' });
    }
  }

  const sorted = [...entries.values()].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0));
  const truncated = sorted.length > maxDays;
  const kept = truncated ? sorted.slice(0, maxDays) : sorted;

  if (q.view === 'merged' && kept.length) {
    // Past the last kept day nothing is answered, so nothing there needs walking.
    const lastDay = kept[kept.length - 1]!.date;
    const dayEnd = Date.parse(`${lastDay}T00:00:00Z`) + DAY_MS;
    const walk: Window = {
      start: days?.$gte !== undefined ? Date.parse(`${days.$gte}T00:00:00Z`) : null,
      end: days?.$lt !== undefined ? Math.min(Date.parse(`${days.$lt}T00:00:00Z`), dayEnd) : dayEnd,
    };
    for (const c of collections) {
      if (!c.listMerged) continue;
      for (const metric of await mergeableMetrics(readStore, c, q.userId)) {
        const listed = await countListed(readStore, c, metric, q, walk, opts.chunk ?? 5_000);
        const ck = countKey(c.collection, metric);
        for (const e of kept) {
          if (!e.counts.has(ck)) continue;
          e.counts.set(ck, listed.get(entryKey(e.date, e.provider)) ?? 0);
        }
      }
    }
  }

  return {
    pending_jobs: pending,
    parked_jobs: parked,
    rejected_records: rejected,
    truncated,
    days: kept.map((e) => {
      const metrics: Record<string, number> = {};
      let records = 0;
      for (const [ck, n] of e.counts) {
        if (n === 0) continue;
        const name = ck.slice(ck.indexOf('\u0000') + 1);
        metrics[name] = (metrics[name] ?? 0) + n;
        records += n;
      }
      return { provider: e.provider, date: e.date, records, metrics, last_synced_at: e.last };
    }),
  };
}

/**
 * Metrics of a collection where the merged view can hide anything: a record is hidden only by a
 * record of another stream (source, body-worn flag, provider), so a metric the user has from one
 * stream only is listed whole and needs no scan. Looked at over all the user's records, since
 * neighbours outside the window and of other providers count.
 */
async function mergeableMetrics(readStore: ReadStore, c: CoverageCollection, userId: string): Promise<string[]> {
  const rows = await readStore.aggregate(c.collection, {
    filter: { user_id: userId },
    groupBy: [...(c.metricField ? [c.metricField] : []), 'source', 'body_worn', 'provider'],
  });
  const streams = new Map<string, number>();
  for (const r of rows) {
    const metric = c.metricField ? String(r.group[c.metricField]) : c.collection;
    streams.set(metric, (streams.get(metric) ?? 0) + 1);
  }
  return [...streams].filter(([, n]) => n > 1).map(([m]) => m);
}

/** Counts per (day, provider) of the records of one metric the merged view lists, by walking the kind's list. */
async function countListed(readStore: ReadStore, c: CoverageCollection, metric: string, q: CoverageQuery, window: Window, chunk: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let after: readonly Scalar[] | null = null;
  for (;;) {
    const page: Page<Doc> = await c.listMerged!(readStore, { userId: q.userId, metric, window, ...withPriorities(q.priorities) }, { after, limit: chunk });
    for (const d of page.items) {
      // The lists take no provider filter: a record is compared with every provider's records.
      if (q.provider !== undefined && d.provider !== q.provider) continue;
      const k = entryKey(String(d[c.dayField]), String(d.provider));
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    if (!page.next) return counts;
    after = page.next;
  }
}
