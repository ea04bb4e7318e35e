import type { EtlJobDoc } from '../../../projections/ingestion/etlJobsProjection.js';
import type { EtlTier } from '../../../commands/ingestion/upload.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { WorkQueue } from '../../workqueue/workQueue.js';
import { ETL_JOB_KINDS, etlJob } from './etlWorker.js';

/** A pending job is looked at only once it has been due this long: the feeder enqueues in milliseconds. */
const GRACE_MS = 30_000;
const BATCH = 100;

/**
 * A backstop to the job feeder (src/processes/jobs/jobFeeder.ts): enqueues the ETL job of any
 * upload the `etl_jobs` read model shows pending and due for GRACE_MS without a live queue job.
 * Runs every half minute in each service process; the queue's key makes concurrent sweeps and
 * the feeder agree on one job, and a job enqueued for an upload whose outcome the read model has
 * not applied yet finds it done and ends at once. Answers how many it enqueued.
 */
export async function sweepEtlJobs(readStore: ReadStore, queue: WorkQueue, now = Date.now()): Promise<number> {
  const due = await readStore.find<EtlJobDoc>('etl_jobs', {
    filter: { status: 'pending', next_attempt_at: { $lte: new Date(now - GRACE_MS).toISOString() } },
    sort: [['next_attempt_at', 1]],
    limit: BATCH,
  });
  let enqueued = 0;
  for (const doc of due) {
    if ((await Promise.all(ETL_JOB_KINDS.map((kind) => queue.findLive(kind, doc._id)))).some(Boolean)) continue;
    if ((await queue.enqueue(etlJob(doc._id, doc.tier as EtlTier), now)).created) enqueued++;
  }
  return enqueued;
}
