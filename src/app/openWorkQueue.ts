import { join } from 'node:path';
import { ensureDataDir } from './dataDir.js';
import type { Config } from '../config.js';
import type { QueueOptions, WorkQueue } from '../workqueue/workQueue.js';

/**
 * The configured backend's work queue: `DATA_DIR/jobs.sqlite` on the embedded default (a file of
 * its own, so claims never wait on the read models' write lock), the `_jobs` collection of the
 * read store's database on MongoDB (sharing the process's MongoClient).
 */
export async function openWorkQueue(config: Config, options: QueueOptions = {}): Promise<WorkQueue> {
  if (config.backend.kind === 'production') {
    const { MongoWorkQueue } = await import('../workqueue/mongoWorkQueue.js');
    return MongoWorkQueue.connect({ url: config.backend.mongodbUrl, database: config.backend.mongodbDatabase, ...options });
  }
  ensureDataDir(config.dataDir);
  const { SqliteWorkQueue } = await import('../workqueue/sqliteWorkQueue.js');
  return new SqliteWorkQueue({ path: join(config.dataDir, 'jobs.sqlite'), ...options });
}
