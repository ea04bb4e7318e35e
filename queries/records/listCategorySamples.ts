import type { MetricGroup } from '../../src/catalog/quantityCatalog.js';
import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { CategorySampleDoc } from '../../projections/records/categorySamplesProjection.js';
import type { PageRequest } from '../shared/page.js';
import type { View } from './mergedPage.js';
import { listInViewByPartition } from './mergedPartitions.js';
import { sourceOrderFor, type SourcePriorities } from '../../src/merge/sourceRanking.js';
import { windowFilter, type Window } from './window.js';

export type ListCategorySamples = { userId: string; type?: string; window: Window; view: View; priorities?: SourcePriorities };

/** Merged-view group of a category type: sleep stages rank as sleep, everything else as other. */
export const categoryGroup = (type: string): MetricGroup => (type === 'sleep_analysis' ? 'sleep' : 'other');

/** Longest category sample worth looking back for (an in-bed interval, a long mindful session). */
const LOOKBACK_MS = 36 * 3_600_000;

/**
 * Category samples, oldest first (start_date, then id), of one type or of all. The merged view
 * compares each sample with the other sources' samples of the same type only, by the rule
 * "intervals overlap" (spec "Merged view": anything else), ranked by that type's order.
 */
export function listCategorySamples(readStore: ReadStore, q: ListCategorySamples, page: PageRequest) {
  const filter: Filter = { user_id: q.userId, ...(q.type !== undefined ? { type: q.type } : {}), ...windowFilter('start_date', q.window) };
  return listInViewByPartition<CategorySampleDoc>(
    readStore,
    {
      collection: 'category_samples',
      filter,
      sort: [
        ['start_date', 1],
        ['id', 1],
      ],
      startField: 'start_date',
      interval: (d) => ({ start: Date.parse(d.start_date), end: Date.parse(d.end_date) }),
      stream: (d) => ({ source: d.source, body_worn: d.body_worn, provider: d.provider }),
      neighbourFields: ['start_date', 'end_date', 'source', 'body_worn', 'provider'],
      partitionOf: (d) => d.type,
      rulesFor: (type) => ({
        neighbourFilter: { user_id: q.userId, type },
        rule: 'other',
        order: sourceOrderFor(type, categoryGroup(type), q.priorities),
        lookbackMs: LOOKBACK_MS,
      }),
    },
    q.view,
    page,
  );
}
