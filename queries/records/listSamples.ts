import { findQuantityType } from '../../src/catalog/quantityCatalog.js';
import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import type { PageRequest } from '../shared/page.js';
import { listInView, type MergedListSpec, type View } from './mergedPage.js';
import { sourceOrderFor, type SourcePriorities } from '../../src/merge/sourceRanking.js';
import { windowFilter, type Window } from './window.js';

export type ListSamples = { userId: string; type: string; window: Window; view: View; priorities?: SourcePriorities };

/** True when the user has samples of a type outside the catalog (spec "Reads" rule 1). */
export async function userHasSamplesOfType(readStore: ReadStore, userId: string, type: string): Promise<boolean> {
  return (await readStore.find('samples', { filter: { user_id: userId, type }, limit: 1 })).length > 0;
}

/**
 * How samples of one type are merged (spec "Merged view"): compared with every provider's samples
 * of the type by the catalog's match rule, ranked by the type's source order. Shared by the list
 * and the statistics, so both hide the same records.
 */
export function samplesViewSpec(userId: string, type: string, filter: Filter, priorities?: SourcePriorities): MergedListSpec<SampleDoc> {
  const t = findQuantityType(type);
  return {
    collection: 'samples',
    filter,
    sort: [['start_date', 1], ['id', 1]],
    neighbourFilter: { user_id: userId, type },
    startField: 'start_date',
    interval: (d) => ({ start: Date.parse(d.start_date), end: Date.parse(d.end_date) }),
    stream: (d) => ({ source: d.source, body_worn: d.body_worn, provider: d.provider }),
    neighbourFields: ['start_date', 'end_date', 'source', 'body_worn', 'provider'],
    rule: t?.match ?? 'other',
    order: sourceOrderFor(type, t?.group ?? 'other', priorities),
    lookbackMs: t?.match === 'count' || !t ? 36 * 3_600_000 : 0,
  };
}

/** Quantity samples of one type, oldest first (start_date, then id). */
export function listSamples(readStore: ReadStore, q: ListSamples, page: PageRequest) {
  const filter: Filter = { user_id: q.userId, type: q.type, ...windowFilter('start_date', q.window) };
  return listInView<SampleDoc>(readStore, samplesViewSpec(q.userId, q.type, filter, q.priorities), q.view, page);
}
