import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { DailySummaryDoc } from '../../projections/records/dailySummariesProjection.js';
import { findPage, type Page, type PageRequest } from '../shared/page.js';
import { mergedFilter, withPrimary, type View } from './view.js';
import { dateWindowFilter, type Window } from './window.js';

export type ListDailySummaries = { userId: string; window: Window; view: View };


/**
 * Daily summaries, oldest first (date, then id), start and end compared as dates. Merged view:
 * a day total overlaps the whole day (spec "Merged view", counts), so two sources' summaries of
 * the same date match; the order is the user's for `daily`, then the activity group's.
 */
export async function listDailySummaries(readStore: ReadStore, q: ListDailySummaries, page: PageRequest): Promise<Page<DailySummaryDoc & { primary: boolean }>> {
  const filter: Filter = { user_id: q.userId, ...dateWindowFilter('date', q.window), ...mergedFilter(q.view) };
  return withPrimary(await findPage<DailySummaryDoc>(readStore, 'daily_summaries', { filter, sort: [['date', 1], ['id', 1]] }, page));
}
