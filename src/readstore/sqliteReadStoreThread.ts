/** Entry of a read store's thread (threadedSqliteReadStore.ts): the embedded read store, its calls run one after another. */
import { serveStore } from '../shared/storeThreadServer.js';
import { SqliteReadStore } from './sqliteReadStore.js';

await serveStore((options: ConstructorParameters<typeof SqliteReadStore>[0]) => new SqliteReadStore(options), { inOrder: true });
