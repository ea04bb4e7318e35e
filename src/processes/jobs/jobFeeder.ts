import type { UploadEvent } from '../../../commands/ingestion/upload.js';
import type { DeletionRequested } from '../../../commands/deletions/deletionJob.js';
import type { UserDeletionRequested } from '../../../commands/users/user.js';
import { defineReactor, type Reactor } from '../../projector/reactor.js';
import type { NewJob, WorkQueue } from '../../workqueue/workQueue.js';
import { deletionJob } from '../deletions/deletionJobRunner.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import { etlJob, etlJobOf } from '../etl/etlWorker.js';

type Fed = Extract<UploadEvent, { type: 'upload.accepted' | 'etl.job_retried' }> | UserDeletionRequested | DeletionRequested;

/** The job an event asks for, if any. */
export async function jobFor(event: { type: string; streamName: string; data: unknown }, eventStore: EventStore): Promise<NewJob | null> {
  const e = event as Fed & { streamName: string };
  switch (e.type) {
    case 'upload.accepted':
      return etlJob(e.streamName, e.data.tier, e.data);
    case 'etl.job_retried':
      // A retried bulk import goes back to the bulk lane: its size is read from its acceptance (null once erased).
      return etlJobOf(eventStore, e.streamName, null);
    case 'user.deletion_requested':
      return deletionJob(e.data.job_id, e.data.user_id);
    case 'deletion.requested':
      // A user's deletion is fed by its request on the user's stream (written first); a provider erasure by this.
      return e.data.provider === null ? null : deletionJob(e.data.job_id, e.data.user_id);
    default:
      return null;
  }
}

/** Events whose jobs are enqueued at once, at most: one queue write of that many jobs stays short. */
export const FED_TOGETHER = 100;

/**
 * Turns the events that ask for background work into queue jobs (issue 26): an accepted upload
 * or a retried ETL job into an `etl` job, a deletion request into a `deletion` job. A reactor,
 * so the request and its job cannot part: the event is the durable request, and the reactor,
 * delivered at least once from its checkpoint, enqueues it after any crash. Enqueueing is keyed
 * (the upload stream, the deletion job id), so a repeated delivery answers the live job; a
 * repeated delivery after the job finished makes a job that finds nothing left to do.
 */
export function jobFeederReactor(deps: { queue: WorkQueue; eventStore: EventStore; kick: () => void }): Reactor {
  return defineReactor<Fed>({
    name: 'job-feeder',
    eventTypes: ['upload.accepted', 'etl.job_retried', 'user.deletion_requested', 'deletion.requested'],
    // Each event's job is keyed and enqueued on its own: the events that arrived while the last
    // enqueues were being made durable are enqueued together, in one of the queue's group commits,
    // and the checkpoint moves once for them (a burst of uploads: one commit for many, not one each).
    together: FED_TOGETHER,
    handle: async (event) => {
      const job = await jobFor(event, deps.eventStore);
      if (!job) return;
      const { created } = await deps.queue.enqueue(job);
      if (created) deps.kick();
    },
  });
}
