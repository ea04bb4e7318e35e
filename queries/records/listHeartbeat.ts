import type { ReadStore } from '../../src/readstore/readStore.js';
import type { HeartbeatSeriesDoc, RrIntervalDoc } from '../../projections/records/heartbeatSeriesProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';
import { windowFilter, type Window } from './window.js';

/** A user's heartbeat series by its integer id; null when the user has no such series. */
export async function getHeartbeatSeries(readStore: ReadStore, userId: string, id: number): Promise<HeartbeatSeriesDoc | null> {
  const [doc] = await readStore.find<HeartbeatSeriesDoc>('heartbeat_series', { filter: { user_id: userId, id }, limit: 1 });
  return doc ?? null;
}

/** Integer ids of the series with these keys (the rows of a page of beats name their series by key). */
export async function seriesIdsByKey(readStore: ReadStore, userId: string, keys: readonly string[]): Promise<Map<string, number>> {
  const unique = [...new Set(keys)];
  if (unique.length === 0) return new Map();
  const docs = await readStore.find<HeartbeatSeriesDoc>('heartbeat_series', { filter: { user_id: userId, _id: { $in: unique } } });
  return new Map(docs.map((d) => [d._id, d.id]));
}

export type ListRrIntervals = { userId: string; seriesKey?: string; window: Window };

/** Beats with their RR intervals, in time order of the beat, of one series or all. */
export function listRrIntervals(readStore: ReadStore, q: ListRrIntervals, page: PageRequest) {
  return findPage<RrIntervalDoc>(
    readStore,
    'rr_intervals',
    {
      filter: { user_id: q.userId, ...(q.seriesKey !== undefined ? { series_key: q.seriesKey } : {}), ...windowFilter('timestamp', q.window) },
      sort: [['timestamp', 1]],
    },
    page,
  );
}

export type ListHrv = { userId: string; seriesId?: number; window: Window };

/** One HRV row per series, ordered by the series' first beat (then id), the window bounding it. */
export function listHrv(readStore: ReadStore, q: ListHrv, page: PageRequest) {
  return findPage<HeartbeatSeriesDoc>(
    readStore,
    'heartbeat_series',
    {
      filter: { user_id: q.userId, ...(q.seriesId !== undefined ? { id: q.seriesId } : {}), ...windowFilter('first_beat', q.window) },
      sort: [
        ['first_beat', 1],
        ['id', 1],
      ],
    },
    page,
  );
}
