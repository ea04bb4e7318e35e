import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import type { EtlJobDoc } from '../../projections/ingestion/etlJobsProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';

/** Filter values of the ETL job list (spec "ETL job": `parked` is the default; done jobs are not listed). */
export type EtlJobListStatus = 'parked' | 'pending' | 'running';

export type ListEtlJobs = { tenantId: string; status: EtlJobListStatus; provider?: string };

/** Spec "Pipeline": a tenant's ETL jobs of one status, newest first (by id, descending). */
export function listEtlJobs(readStore: ReadStore, q: ListEtlJobs, page: PageRequest) {
  const filter: Filter = { tenant_id: q.tenantId, status: q.status, ...(q.provider !== undefined ? { provider: q.provider } : {}) };
  return findPage<EtlJobDoc>(readStore, 'etl_jobs', { filter, sort: [['id', -1]] }, page);
}
