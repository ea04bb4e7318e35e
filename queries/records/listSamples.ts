import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import { findPage, type Page, type PageRequest } from '../shared/page.js';
import { mergedFilter, withPrimary, type View } from './view.js';
import { windowFilter, type Window } from './window.js';

export type ListSamples = { userId: string; type: string; window: Window; view: View };

/** True when the user has samples of a type outside the catalog (spec "Reads" rule 1). */
export async function userHasSamplesOfType(readStore: ReadStore, userId: string, type: string): Promise<boolean> {
  return (await readStore.find('samples', { filter: { user_id: userId, type }, limit: 1 })).length > 0;
}


/** Quantity samples of one type, oldest first (start_date, then id). */
export async function listSamples(readStore: ReadStore, q: ListSamples, page: PageRequest): Promise<Page<SampleDoc & { primary: boolean }>> {
  const filter: Filter = { user_id: q.userId, type: q.type, ...windowFilter('start_date', q.window), ...mergedFilter(q.view) };
  return withPrimary(await findPage<SampleDoc>(readStore, 'samples', { filter, sort: [['start_date', 1], ['id', 1]] }, page));
}
