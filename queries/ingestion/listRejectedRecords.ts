import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import { REJECTED_RECORDS, type RejectedRecordDoc } from '../../projections/ingestion/rejectedRecordsProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';

export type ListRejectedRecords = { userId: string; provider?: string };

/**
 * The lines and objects the ETL could not store for one user (contracts §3: "kept for
 * inspection"), the ones coverage counts as `rejected_records`; newest rejection first.
 */
export function listRejectedRecords(readStore: ReadStore, q: ListRejectedRecords, page: PageRequest) {
  const filter: Filter = { user_id: q.userId, ...(q.provider !== undefined ? { provider: q.provider } : {}) };
  return findPage<RejectedRecordDoc>(readStore, REJECTED_RECORDS, { filter, sort: [['at', -1]] }, page);
}
