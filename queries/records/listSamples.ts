import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import { findPage, findRenderedPage, type Page, type PageRequest } from '../shared/page.js';
import type { RenderedPage, RenderTemplate } from '../../src/readstore/renderedRows.js';
import { mergedFilter, withPrimary, type View } from './view.js';
import { windowFilter, type Window } from './window.js';

export type ListSamples = { userId: string; type: string; window: Window; view: View };

/** True when the user has samples of a type outside the catalog (spec "Reads" rule 1). */
export async function userHasSamplesOfType(readStore: ReadStore, userId: string, type: string): Promise<boolean> {
  return (await readStore.find('samples', { filter: { user_id: userId, type }, limit: 1 })).length > 0;
}


const samplesQuery = (q: ListSamples) => ({
  filter: { user_id: q.userId, type: q.type, ...windowFilter('start_date', q.window), ...mergedFilter(q.view) } satisfies Filter,
  sort: [['start_date', 1], ['id', 1]] as const,
});

/** Quantity samples of one type, oldest first (start_date, then id). */
export async function listSamples(readStore: ReadStore, q: ListSamples, page: PageRequest): Promise<Page<SampleDoc & { primary: boolean }>> {
  return withPrimary(await findPage<SampleDoc>(readStore, 'samples', samplesQuery(q), page));
}

/**
 * The same page as listSamples written as its answer's JSON by `template` (the route's; `primary`
 * is the template's `notTrue` of `hidden`): for the REST page of up to 1,000 samples, which then
 * sends the stored rows' bytes instead of building, mapping and serialising documents.
 */
export async function listSamplesJson(readStore: ReadStore, q: ListSamples, template: RenderTemplate, page: PageRequest): Promise<RenderedPage> {
  return findRenderedPage(readStore, 'samples', samplesQuery(q), template, page);
}
