import { siblingModule } from '../shared/workerThreads.js';
import { forwarded, StoreThread, type AsyncMethodOf } from '../shared/storeThread.js';
import { LostLeaseError, type QueueOptions, type WorkQueue } from './workQueue.js';

/** What the queue's thread opens it with: plain data only (a clock or a back-off stays with the in-thread queue). */
export type ThreadedQueueOptions = { path: string } & Omit<QueueOptions, 'clock' | 'backoff'>;

type QueueMethod = Exclude<AsyncMethodOf<WorkQueue>, 'close'>;

/** Every method of the queue, each forwarded to the thread: its arguments are plain data (ids, leases, requests). */
const QUEUE_METHODS = [
  'enqueue', 'claim', 'heartbeat', 'complete', 'fail', 'reschedule', 'park', 'cancel', 'cancelJob', 'get', 'findLive',
  'deadLetters', 'replay', 'purgeDead', 'lastDead', 'purgeNaming', 'purgeExpired', 'counts',
] as const satisfies readonly QueueMethod[];
// A method added to WorkQueue and not to the list above fails to compile here.
const everyMethod: Exclude<QueueMethod, (typeof QUEUE_METHODS)[number]> extends never ? true : never = true;
void everyMethod;

/**
 * The embedded work queue on a thread of its own (issue 37): the queue's reads, its fair picks
 * and its group commits (one fsync per group of enqueues, claims and outcomes) run there, so the
 * thread that answers HTTP never waits on them; each call is answered as the in-thread queue
 * answers it (a write once durable), its `LostLeaseError` rebuilt as itself.
 */
export async function openThreadedSqliteWorkQueue(options: ThreadedQueueOptions): Promise<WorkQueue> {
  const thread = await StoreThread.start(siblingModule(import.meta.url, 'sqliteWorkQueueThread'), options, { name: 'work queue', errors: [LostLeaseError] });
  return { backend: 'sqlite', ...forwarded<WorkQueue, QueueMethod>(thread, QUEUE_METHODS), close: () => thread.close() };
}
