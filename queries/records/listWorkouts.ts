import type { ReadStore } from '../../src/readstore/readStore.js';
import type { RoutePointDoc, WorkoutDoc } from '../../projections/records/workoutsProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';
import { listInView, type View } from './mergedPage.js';
import { sourceOrderFor, type SourcePriorities } from '../../src/merge/sourceRanking.js';
import { windowFilter, type Window } from './window.js';

export type ListWorkouts = { userId: string; type?: string; window: Window; view: View; priorities?: SourcePriorities };

/** Longest workout worth looking back for (multi-day events). */
const LOOKBACK_MS = 72 * 3_600_000;

/**
 * Workouts, oldest first (start_date, then id), of one activity or all. Merged view: two
 * workouts match when they share at least half of the shorter one, whatever activity each
 * source called it (the same session is often labelled differently), so a type filter lists a
 * subset of the unfiltered merged list. Order: the user's for `workouts`, then the workouts
 * group's (spec "Merged view").
 */
export function listWorkouts(readStore: ReadStore, q: ListWorkouts, page: PageRequest) {
  return listInView<WorkoutDoc>(
    readStore,
    {
      collection: 'workouts',
      filter: { user_id: q.userId, ...(q.type !== undefined ? { type: q.type } : {}), ...windowFilter('start_date', q.window) },
      sort: [
        ['start_date', 1],
        ['id', 1],
      ],
      neighbourFilter: { user_id: q.userId },
      startField: 'start_date',
      interval: (d) => ({ start: Date.parse(d.start_date), end: Date.parse(d.end_date) }),
      stream: (d) => ({ source: d.source, body_worn: d.body_worn, provider: d.provider }),
      neighbourFields: ['start_date', 'end_date', 'source', 'body_worn', 'provider'],
      rule: 'session',
      order: sourceOrderFor('workouts', 'workouts', q.priorities),
      lookbackMs: LOOKBACK_MS,
    },
    q.view,
    page,
  );
}

/** A user's workout by its integer id; null when the user has no such workout. */
export async function getWorkout(readStore: ReadStore, userId: string, id: number): Promise<WorkoutDoc | null> {
  const [doc] = await readStore.find<WorkoutDoc>('workouts', { filter: { user_id: userId, id }, limit: 1 });
  return doc ?? null;
}

export type ListRoutePoints = { userId: string; workoutKey: string; window: Window };

/** GPS points of one workout in time order, the window bounding the timestamp. */
export function listRoutePoints(readStore: ReadStore, q: ListRoutePoints, page: PageRequest) {
  return findPage<RoutePointDoc>(
    readStore,
    'workout_route_points',
    { filter: { user_id: q.userId, workout_key: q.workoutKey, ...windowFilter('timestamp', q.window) }, sort: [['timestamp', 1]] },
    page,
  );
}
