import type { ReadStore } from '../../src/readstore/readStore.js';
import type { EcgRecordingDoc } from '../../projections/records/ecgProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';
import { windowFilter, type Window } from './window.js';

export type ListEcg = { userId: string; window: Window };

/** ECG recordings without voltages, oldest first (start_date, then id; spec "Reads" rule 4). */
export function listEcgRecordings(readStore: ReadStore, q: ListEcg, page: PageRequest) {
  return findPage<EcgRecordingDoc>(
    readStore,
    'ecg_recordings',
    {
      filter: { user_id: q.userId, ...windowFilter('start_date', q.window) },
      sort: [
        ['start_date', 1],
        ['id', 1],
      ],
    },
    page,
  );
}
