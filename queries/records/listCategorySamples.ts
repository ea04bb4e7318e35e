import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { CategorySampleDoc } from '../../projections/records/categorySamplesProjection.js';
import { findPage, type Page, type PageRequest } from '../shared/page.js';
import { mergedFilter, withPrimary, type View } from './view.js';
import { windowFilter, type Window } from './window.js';

export type ListCategorySamples = { userId: string; type?: string; window: Window; view: View };



/**
 * Category samples, oldest first (start_date, then id), of one type or of all. The merged view
 * compares each sample with the other sources' samples of the same type only, by the rule
 * "intervals overlap" (spec "Merged view": anything else), ranked by that type's order.
 */
export async function listCategorySamples(readStore: ReadStore, q: ListCategorySamples, page: PageRequest): Promise<Page<CategorySampleDoc & { primary: boolean }>> {
  const filter: Filter = { user_id: q.userId, ...(q.type !== undefined ? { type: q.type } : {}), ...windowFilter('start_date', q.window), ...mergedFilter(q.view) };
  return withPrimary(await findPage<CategorySampleDoc>(readStore, 'category_samples', { filter, sort: [['start_date', 1], ['id', 1]] }, page));
}
