import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import { jobPhase, type EtlJobDoc } from '../../projections/ingestion/etlJobsProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';

/** Filter values of the ETL job list (spec "ETL job": `parked` is the default; done jobs are not listed). */
export type EtlJobListStatus = 'parked' | 'pending' | 'running';

export type ListEtlJobs = { tenantId: string; status: EtlJobListStatus; provider?: string };

/** Spec "Pipeline": a tenant's ETL jobs of one status, newest first (by id, descending). */
export function listEtlJobs(readStore: ReadStore, q: ListEtlJobs, page: PageRequest) {
  // The tenant's index holds the phase: pending and running jobs are found among the open ones.
  const filter: Filter = { tenant_id: q.tenantId, phase: jobPhase(q.status), status: q.status, ...(q.provider !== undefined ? { provider: q.provider } : {}) };
  return findPage<EtlJobDoc>(readStore, 'etl_jobs', { filter, sort: [['id', -1]] }, page);
}
