import type { ReadStore } from '../../src/readstore/readStore.js';
import type { ObservationDoc } from '../../projections/records/observationsProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';

/** A user's multi-component observations, oldest first (start_date, then id). */
export function listObservations(readStore: ReadStore, userId: string, page: PageRequest) {
  return findPage<ObservationDoc>(readStore, 'observations', { filter: { user_id: userId }, sort: [['start_date', 1], ['id', 1]] }, page);
}
