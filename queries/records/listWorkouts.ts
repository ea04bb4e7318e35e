import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { RoutePointDoc, WorkoutDoc } from '../../projections/records/workoutsProjection.js';
import { findPage, type Page, type PageRequest } from '../shared/page.js';
import { mergedFilter, withPrimary, type View } from './view.js';
import { windowFilter, type Window } from './window.js';

export type ListWorkouts = { userId: string; type?: string; window: Window; view: View };


/**
 * Workouts, oldest first (start_date, then id), of one activity or all. Merged view: two
 * workouts match when they share at least half of the shorter one, whatever activity each
 * source called it (the same session is often labelled differently), so a type filter lists a
 * subset of the unfiltered merged list. Order: the user's for `workouts`, then the workouts
 * group's (spec "Merged view").
 */
export async function listWorkouts(readStore: ReadStore, q: ListWorkouts, page: PageRequest): Promise<Page<WorkoutDoc & { primary: boolean }>> {
  const filter: Filter = { user_id: q.userId, ...(q.type !== undefined ? { type: q.type } : {}), ...windowFilter('start_date', q.window), ...mergedFilter(q.view) };
  return withPrimary(await findPage<WorkoutDoc>(readStore, 'workouts', { filter, sort: [['start_date', 1], ['id', 1]] }, page));
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
