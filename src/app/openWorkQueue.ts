import { join } from 'node:path';
import { ensureDataDir } from './dataDir.js';
import type { Config } from '../config.js';
import type { QueueOptions, WorkQueue } from '../workqueue/workQueue.js';

/**
 * The configured backend's work queue: `DATA_DIR/jobs.sqlite` on the embedded default (a file of
 * its own, so claims never wait on the read models' write lock), the `_jobs` collection of the
 * read store's database on MongoDB (sharing the process's MongoClient). With `placement.thread`
 * (the service) the embedded queue runs on a thread of its own (threadedSqliteWorkQueue.ts).
 */
export async function openWorkQueue(config: Config, options: QueueOptions = {}, placement: { thread?: boolean } = {}): Promise<WorkQueue> {
  if (config.backend.kind === 'production') {
    const { MongoWorkQueue } = await import('../workqueue/mongoWorkQueue.js');
    return MongoWorkQueue.connect({ url: config.backend.mongodbUrl, database: config.backend.mongodbDatabase, ...options });
  }
  ensureDataDir(config.dataDir);
  const path = join(config.dataDir, 'jobs.sqlite');
  const { clock, backoff, ...plain } = options;
  // The service's queue on a thread of its own (issue 37): an injected clock or back-off cannot cross to it.
  if (placement.thread && !clock && !backoff) {
    const { openThreadedSqliteWorkQueue } = await import('../workqueue/threadedSqliteWorkQueue.js');
    return openThreadedSqliteWorkQueue({ path, ...plain });
  }
  const { SqliteWorkQueue } = await import('../workqueue/sqliteWorkQueue.js');
  return new SqliteWorkQueue({ path, ...options });
}
