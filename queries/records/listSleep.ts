import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { SleepPhaseDoc, SleepSessionDoc } from '../../projections/records/sleepProjection.js';
import { findPage, type Page, type PageRequest } from '../shared/page.js';
import { mergedFilter, withPrimary, type View } from './view.js';
import { windowFilter, type Window } from './window.js';

export type ListSleepSessions = { userId: string; window: Window; view: View };


/**
 * Sleep sessions, oldest first (bedtime_start, then id), the window bounding bedtime_start.
 * Merged view: two sessions match when they share at least half of the shorter one; the order
 * is the user's for `sleep`, then the sleep group's (spec "Merged view").
 */
export async function listSleepSessions(readStore: ReadStore, q: ListSleepSessions, page: PageRequest): Promise<Page<SleepSessionDoc & { primary: boolean }>> {
  const filter: Filter = { user_id: q.userId, ...windowFilter('bedtime_start', q.window), ...mergedFilter(q.view) };
  return withPrimary(await findPage<SleepSessionDoc>(readStore, 'sleep_sessions', { filter, sort: [['bedtime_start', 1], ['id', 1]] }, page));
}

/** A user's session by its integer id; null when the user has no such session. */
export async function getSleepSession(readStore: ReadStore, userId: string, id: number): Promise<SleepSessionDoc | null> {
  const [doc] = await readStore.find<SleepSessionDoc>('sleep_sessions', { filter: { user_id: userId, id }, limit: 1 });
  return doc ?? null;
}

export type ListSleepPhases = { userId: string; sessionKey: string; window: Window };

/** Phases of one session, oldest first (start_date, then id), the window bounding start_date. */
export function listSleepPhases(readStore: ReadStore, q: ListSleepPhases, page: PageRequest) {
  return findPage<SleepPhaseDoc>(
    readStore,
    'sleep_phases',
    {
      filter: { user_id: q.userId, session_key: q.sessionKey, ...windowFilter('start_date', q.window) },
      sort: [
        ['start_date', 1],
        ['id', 1],
      ],
    },
    page,
  );
}
