import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import { findPage, type Page, type PageRequest } from '../shared/page.js';
import type { View } from './mergedPage.js';
import { windowFilter, type Window } from './window.js';

export type ListSamples = { userId: string; type: string; window: Window; view: View };

/** True when the user has samples of a type outside the catalog (spec "Reads" rule 1). */
export async function userHasSamplesOfType(readStore: ReadStore, userId: string, type: string): Promise<boolean> {
  return (await readStore.find('samples', { filter: { user_id: userId, type }, limit: 1 })).length > 0;
}

/**
 * The merged view of samples is state: the samples projection flags every sample a better
 * ranked source's matching sample hides, under the user's current order
 * (projections/records/sampleRollups/samplesDerivation.ts). Either view is one index range scan.
 */
export const mergedSamplesFilter = (view: View): Filter => (view === 'merged' ? { hidden: { $ne: true } } : {});

/** Quantity samples of one type, oldest first (start_date, then id). */
export async function listSamples(readStore: ReadStore, q: ListSamples, page: PageRequest): Promise<Page<SampleDoc & { primary: boolean }>> {
  const filter: Filter = { user_id: q.userId, type: q.type, ...windowFilter('start_date', q.window), ...mergedSamplesFilter(q.view) };
  const rows = await findPage<SampleDoc>(readStore, 'samples', { filter, sort: [['start_date', 1], ['id', 1]] }, page);
  return { items: rows.items.map((d) => Object.assign(d, { primary: d.hidden !== true })), next: rows.next };
}
