import type { EtlJobDoc } from '../../../projections/ingestion/etlJobsProjection.js';
import { decideFinishEtlJob } from '../../../commands/ingestion/finishEtlJob.js';
import { uploadState, type EtlTier } from '../../../commands/ingestion/upload.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { ConcurrencyError, StreamDeletedError, type EventStore } from '../../eventstore/eventStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { WorkQueue } from '../../workqueue/workQueue.js';
import { ETL_JOB_KINDS, etlJobOf } from './etlWorker.js';

/** A pending job is looked at only once it has been due this long: the feeder enqueues in milliseconds. */
const GRACE_MS = 30_000;
const BATCH = 100;

/** Whether an upload's ETL job is live on the queue in either lane (`etl` or `etl.bulk`). */
async function hasLiveEtlJob(queue: WorkQueue, stream: string): Promise<boolean> {
  return (await Promise.all(ETL_JOB_KINDS.map((kind) => queue.findLive(kind, stream)))).some(Boolean);
}

/**
 * A backstop to the job feeder (src/processes/jobs/jobFeeder.ts): enqueues the ETL job of any
 * upload the `etl_jobs` read model shows pending and due for GRACE_MS without a live queue job,
 * in the lane of the upload's size.
 * Runs every half minute in each service process; the queue's key makes concurrent sweeps and
 * the feeder agree on one job, and a job enqueued for an upload whose outcome the read model has
 * not applied yet finds it done and ends at once. Answers how many it enqueued.
 */
export async function sweepEtlJobs(readStore: ReadStore, eventStore: EventStore, queue: WorkQueue, now = Date.now()): Promise<number> {
  const due = await readStore.find<EtlJobDoc>('etl_jobs', {
    filter: { status: 'pending', next_attempt_at: { $lte: new Date(now - GRACE_MS).toISOString() } },
    sort: [['next_attempt_at', 1]],
    limit: BATCH,
  });
  let enqueued = 0;
  for (const doc of due) {
    if (await hasLiveEtlJob(queue, doc._id)) continue;
    let job;
    try {
      // In the lane of its size: a bulk upload's job never lands on a thread shared with small ones.
      job = await etlJobOf(eventStore, doc._id, doc.tier as EtlTier);
    } catch (err) {
      // Erased since the read model saw it: nothing to run.
      if (err instanceof StreamDeletedError) continue;
      throw err;
    }
    if ((await queue.enqueue(job, now)).created) enqueued++;
  }
  return enqueued;
}

/**
 * Ends the attempts that the work queue gave up on without the upload stream hearing of it
 * (issue 26, the upload that stayed `running`): a process that dies holding an ETL job on its
 * last attempt leaves the job to be dead-lettered by the next claim that finds its lease expired,
 * and nothing of the dead process records the outcome. An upload the `etl_jobs` read model shows
 * running, whose attempt's lease ran out GRACE_MS ago, and whose queue job is no longer live, lost
 * that attempt: it is recorded as failed (`etl.job_failed`, the sweep above then enqueues the next
 * attempt) or, on the last attempt, parked (`etl.job_parked` and, for a user's upload,
 * `upload.finished` with status `parked`), so the Upload resource and its webhook end.
 *
 * The queue is asked before the stream is read: a job that ends by its handler records its
 * outcome before it leaves the queue, so a stream still `running` after that belongs to a lost
 * attempt. The append is at the revision read, so two sweeping processes, or a replayed dead
 * letter starting meanwhile, record one outcome. Answers how many attempts it ended.
 */
export async function endLostEtlAttempts(readStore: ReadStore, eventStore: EventStore, queue: WorkQueue, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - GRACE_MS).toISOString();
  const running = await readStore.find<EtlJobDoc>('etl_jobs', {
    filter: { status: 'running', lease_until: { $lte: cutoff } },
    sort: [['lease_until', 1]],
    limit: BATCH,
  });
  let ended = 0;
  for (const doc of running) {
    if (await hasLiveEtlJob(queue, doc._id)) continue;
    try {
      const { state, revision } = await loadState(eventStore, doc._id, uploadState);
      if (state.status !== 'running' || revision === null || !state.accepted || (state.leaseUntil !== null && state.leaseUntil > cutoff)) continue;
      const error = `attempt ${state.attempt} was lost: the process running it stopped before it finished (its lease ran out)`;
      const events = decideFinishEtlJob(state, { kind: 'failed', error }, new Date(now));
      await eventStore.appendToStream(doc._id, events, { expectedRevision: revision });
      ended++;
    } catch (err) {
      // Erased meanwhile, or another process (a sweep, a replayed attempt) wrote first: its outcome stands.
      if (err instanceof StreamDeletedError || err instanceof ConcurrencyError) continue;
      throw err;
    }
  }
  return ended;
}
