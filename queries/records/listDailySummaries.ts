import type { ReadStore } from '../../src/readstore/readStore.js';
import type { DailySummaryDoc } from '../../projections/records/dailySummariesProjection.js';
import type { PageRequest } from '../shared/page.js';
import { listInView, type View } from './mergedPage.js';
import { sourceOrderFor, type SourcePriorities } from '../../src/merge/sourceRanking.js';
import { dateWindowFilter, type Window } from './window.js';

export type ListDailySummaries = { userId: string; window: Window; view: View; priorities?: SourcePriorities };

const DAY_MS = 86_400_000;

/**
 * Daily summaries, oldest first (date, then id), start and end compared as dates. Merged view:
 * a day total overlaps the whole day (spec "Merged view", counts), so two sources' summaries of
 * the same date match; the order is the user's for `daily`, then the activity group's.
 */
export function listDailySummaries(readStore: ReadStore, q: ListDailySummaries, page: PageRequest) {
  return listInView<DailySummaryDoc>(
    readStore,
    {
      collection: 'daily_summaries',
      filter: { user_id: q.userId, ...dateWindowFilter('date', q.window) },
      sort: [
        ['date', 1],
        ['id', 1],
      ],
      neighbourFilter: { user_id: q.userId },
      startField: 'day_start',
      interval: (d) => {
        const start = Date.parse(d.day_start);
        return { start, end: start + DAY_MS };
      },
      stream: (d) => ({ source: d.source, body_worn: d.body_worn, provider: d.provider }),
      neighbourFields: ['day_start', 'source', 'body_worn', 'provider'],
      rule: 'count',
      order: sourceOrderFor('daily', 'activity', q.priorities),
      lookbackMs: 0,
    },
    q.view,
    page,
  );
}
