import type { EtlJobDoc } from '../../../projections/ingestion/etlJobsProjection.js';
import { decideFinishEtlJob } from '../../../commands/ingestion/finishEtlJob.js';
import { uploadState, type EtlTier, type UploadState } from '../../../commands/ingestion/upload.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { ConcurrencyError, StreamDeletedError, type EventStore } from '../../eventstore/eventStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { Job, WorkQueue } from '../../workqueue/workQueue.js';
import { ETL_JOB_KINDS, etlJobOf } from './etlWorker.js';

/** A pending job is looked at only once it has been due this long: the feeder enqueues in milliseconds. */
const GRACE_MS = 30_000;
const BATCH = 100;

/** Whether an upload's ETL job is live on the queue in either lane (`etl` or `etl.bulk`). */
async function hasLiveEtlJob(queue: WorkQueue, stream: string): Promise<boolean> {
  return (await Promise.all(ETL_JOB_KINDS.map((kind) => queue.findLive(kind, stream)))).some(Boolean);
}

/**
 * The dead queue job of an upload, of either lane, dead-lettered at or after `since` (epoch ms): the
 * queue gave up on the upload's current attempts. A dead job from before (the upload was retried
 * since, and its new job is what counts) is not.
 */
async function deadEtlJobSince(queue: WorkQueue, stream: string, since: number): Promise<Job | null> {
  for (const kind of ETL_JOB_KINDS) {
    const dead = await queue.lastDead(kind, stream);
    if (dead && dead.finishedAt !== null && dead.finishedAt >= since) return dead;
  }
  return null;
}

/**
 * Parks an upload whose queue job was dead-lettered (issue 35): `etl.job_parked` and, for a user's
 * upload, `upload.finished` with status `parked`, whatever the upload's own count of attempts (the
 * queue counts attempts that died before they could record anything, which the stream never saw).
 * The parked event carries the dead job's count, so the upload's history says how many attempts
 * were made (the stream's own count is 0 when none of them recorded a start).
 * At the revision read: of two sweeps, or a replayed job starting meanwhile, one outcome stands.
 */
async function parkGivenUp(eventStore: EventStore, stream: string, state: UploadState, revision: number, dead: Job, now: number): Promise<boolean> {
  const error = 'the work queue gave up on the job: every attempt stopped before it finished (their processes stopped or their leases ran out)';
  const counted = { ...state, attempt: Math.max(state.attempt, dead.attempts) };
  try {
    await eventStore.appendToStream(stream, decideFinishEtlJob(counted, { kind: 'failed', error, final: true }, new Date(now)), { expectedRevision: revision });
    return true;
  } catch (err) {
    if (err instanceof StreamDeletedError || err instanceof ConcurrencyError) return false;
    throw err;
  }
}

/**
 * A backstop to the job feeder (src/processes/jobs/jobFeeder.ts): enqueues the ETL job of any
 * upload the `etl_jobs` read model shows pending and due for GRACE_MS without a live queue job,
 * in the lane of the upload's size. An upload whose queue job was dead-lettered since it fell due
 * is parked instead (`parkGivenUp`).
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
    // Dead-lettered since the upload fell due (each attempt's process died before it recorded a
    // start): parked, not enqueued again, or a job that kills its process would run forever.
    const dead = doc.next_attempt_at === null ? null : await deadEtlJobSince(queue, doc._id, Date.parse(doc.next_attempt_at));
    if (dead) {
      const { state, revision } = await loadState(eventStore, doc._id, uploadState);
      if (state.status === 'pending' && state.accepted && revision !== null) await parkGivenUp(eventStore, doc._id, state, revision, dead, now);
      continue;
    }
    // In the lane of its size: a bulk upload's job never lands on a thread shared with small ones.
    const job = await etlJobOf(eventStore, doc._id, doc.tier as EtlTier);
    // Erased since the read model saw it: nothing to run.
    if (!job) continue;
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
 * attempt) or, on the last attempt or once the queue dead-lettered the job, parked (`etl.job_parked` and, for a user's upload,
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
      // Dead-lettered after this attempt's lease (later attempts died before recording a start): no attempt follows.
      const final = (await deadEtlJobSince(queue, doc._id, Date.parse(state.leaseUntil ?? cutoff))) !== null;
      const error = `attempt ${state.attempt} was lost: the process running it stopped before it finished (its lease ran out)`;
      const events = decideFinishEtlJob(state, { kind: 'failed', error, final }, new Date(now));
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
