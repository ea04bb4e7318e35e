/** Entry of the work queue's thread (threadedSqliteWorkQueue.ts): the embedded queue, served to the thread that started it. */
import { serveStore } from '../shared/storeThreadServer.js';
import { SqliteWorkQueue } from './sqliteWorkQueue.js';
import type { ThreadedQueueOptions } from './threadedSqliteWorkQueue.js';

await serveStore((options: ThreadedQueueOptions) => new SqliteWorkQueue(options));
