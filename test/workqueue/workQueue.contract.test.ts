import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, inject, it } from 'vitest';
import { acquireMongoClient } from '../../src/readstore/mongoConnection.js';
import { MongoWorkQueue } from '../../src/workqueue/mongoWorkQueue.js';
import { SqliteWorkQueue } from '../../src/workqueue/sqliteWorkQueue.js';
import { openThreadedSqliteWorkQueue } from '../../src/workqueue/threadedSqliteWorkQueue.js';
import { defaultBackoff } from '../../src/workqueue/workQueue.js';
import { tempDir } from '../support/tmp.js';
import { memoryMongo } from './memoryMongo.js';
import { workQueueContract } from './workQueueContract.js';

const dir = tempDir();

workQueueContract('embedded SQLite', async (options) => {
  const path = join(dir, `jobs-${randomUUID()}.sqlite`);
  const queue = new SqliteWorkQueue({ path, ...options });
  return { queue, another: async () => new SqliteWorkQueue({ path, ...options }), close: () => queue.close() };
});

// The service's queue (issue 37): the same queue on a thread of its own, every call a message. A
// back-off (a function) cannot cross to the thread: it runs on the default, as in the service.
workQueueContract('embedded SQLite on a thread of its own', async ({ clock: _clock, backoff: _backoff, ...options }) => {
  const path = join(dir, `jobs-${randomUUID()}.sqlite`);
  const queue = await openThreadedSqliteWorkQueue({ path, ...options });
  return { queue, another: () => openThreadedSqliteWorkQueue({ path, ...options }), close: () => queue.close(), backoff: defaultBackoff };
});

// The MongoDB adapter's logic against an in-memory stand-in (test/workqueue/memoryMongo.ts): runs everywhere.
workQueueContract('MongoDB adapter on an in-memory stand-in', async (options) => {
  const { db } = memoryMongo();
  const queue = new MongoWorkQueue(db, options);
  await queue.ensureIndexes();
  return { queue, another: async () => new MongoWorkQueue(db, options), close: () => queue.close() };
});

const url = inject('mongodbUrl');
if (url) {
  workQueueContract('MongoDB', async (options) => {
    const database = `wellstream_jobs_${randomUUID().slice(0, 8)}`;
    const queue = await MongoWorkQueue.connect({ url, database, ...options });
    return {
      queue,
      another: () => MongoWorkQueue.connect({ url, database, ...options }),
      close: async () => {
        const handle = await acquireMongoClient(url);
        await handle.client.db(database).dropDatabase();
        await handle.release();
        await queue.close();
      },
    };
  });
} else describe.skip('WorkQueue contract: MongoDB (no Docker engine or MONGODB_URL)', () => it('skipped', () => {}));
