import type { ReadStore } from '../../src/readstore/readStore.js';
import type { DeletionJobDoc } from '../../projections/deletions/deletionJobsProjection.js';

/** Another tenant's job is null, like a missing one. */
export async function getDeletionJob(readStore: ReadStore, tenantId: string, jobId: string) {
  const job = await readStore.get<DeletionJobDoc>('deletion_jobs', jobId);
  return job && job.tenant_id === tenantId ? job : null;
}
