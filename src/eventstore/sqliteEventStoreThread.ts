/** Entry of the event store's writer thread (threadedSqliteEventStore.ts): the embedded store, served to the thread that started it. */
import { serveStore } from '../shared/storeThreadServer.js';
import { SqliteEventStore, type SqliteEventStoreOptions } from './sqliteEventStore.js';

await serveStore((options: SqliteEventStoreOptions) => new SqliteEventStore(options));
