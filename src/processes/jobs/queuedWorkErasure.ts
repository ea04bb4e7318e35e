import type { QueuedWorkErasure } from '../../../commands/deletions/erasureSteps.js';
import { eraseDeadLettersNaming } from '../../projector/deadLetters.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { WorkQueue } from '../../workqueue/workQueue.js';
import { DELETION_JOB } from '../deletions/deletionJobRunner.js';

/** Jobs looked at per page of the queue walk: each page is one short write. */
const QUEUE_PAGE = 500;
/** Pages at most (50 million jobs): the walk ends with the queue; this only bounds a queue growing under it. */
const MAX_QUEUE_PAGES = 100_000;

/**
 * Nothing of an erased user stays queued (contracts §19): every job, whatever its state (dead
 * letters and reactors' set-aside events included), whose key, lock, payload, progress, error or
 * holder holds the user's id goes, but the deletion job carrying the erasure out (its own record
 * until retention, as its stream is); then the projections' dead letters whose stream or error
 * names the user. User ids are random UUIDs: a text that holds one is about that user. The queue
 * is walked in pages by id, each page one short write, so no erasure holds the queue for long.
 */
export function queuedWorkErasure(queue: Pick<WorkQueue, 'purgeNaming'>, readStore: ReadStore): QueuedWorkErasure {
  return {
    async eraseUser(userId, deletionJobId, signal) {
      let after: string | null = null;
      for (let page = 0; page < MAX_QUEUE_PAGES; page++) {
        signal?.throwIfAborted();
        const { next }: { next: string | null } = await queue.purgeNaming(userId, { except: { kind: DELETION_JOB, key: deletionJobId }, after, limit: QUEUE_PAGE });
        if (next === null) break;
        after = next;
      }
      await eraseDeadLettersNaming(readStore, userId, signal);
    },
  };
}
