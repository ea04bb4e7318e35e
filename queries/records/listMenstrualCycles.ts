import type { ReadStore } from '../../src/readstore/readStore.js';
import type { MenstrualCycleDoc } from '../../projections/records/menstrualCyclesProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';
import { dateWindowFilter, type Window } from './window.js';

export type ListMenstrualCycles = { userId: string; window: Window };

/** Cycles selected by their start day (start and end compared as dates), oldest first. */
export function listMenstrualCycles(readStore: ReadStore, q: ListMenstrualCycles, page: PageRequest) {
  return findPage<MenstrualCycleDoc>(
    readStore,
    'menstrual_cycles',
    {
      filter: { user_id: q.userId, ...dateWindowFilter('start_date', q.window) },
      sort: [
        ['start_date', 1],
        ['id', 1],
      ],
    },
    page,
  );
}
