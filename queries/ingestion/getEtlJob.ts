import type { ReadStore } from '../../src/readstore/readStore.js';
import type { EtlJobDoc } from '../../projections/ingestion/etlJobsProjection.js';

/** A tenant's ETL job by its integer id; another tenant's job is not found. */
export async function getEtlJob(readStore: ReadStore, tenantId: string, id: number): Promise<EtlJobDoc | null> {
  const [job] = await readStore.find<EtlJobDoc>('etl_jobs', { filter: { tenant_id: tenantId, id }, limit: 1 });
  return job ?? null;
}
