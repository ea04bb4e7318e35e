import { join } from 'node:path';
import { describe, inject, it } from 'vitest';
import { MongoReadStore } from '../../src/readstore/mongoReadStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { ThreadedSqliteReadStore } from '../../src/readstore/threadedSqliteReadStore.js';
import { tempDir } from '../support/tmp.js';
import { readStoreContract } from './readStoreContract.js';

const dir = tempDir();
readStoreContract('embedded SQLite', async () => new SqliteReadStore({ path: join(dir, 'read.sqlite') }));
// A rebuild's replay store (projections rebuild --pipeline): the same store on a thread, its calls in order.
readStoreContract('embedded SQLite on a store thread', async () => ThreadedSqliteReadStore.open({ path: join(dir, 'read-threaded.sqlite') }), { noChangeStamp: true });

const url = inject('mongodbUrl');
if (url) readStoreContract('MongoDB', async () => MongoReadStore.connect({ url, database: 'wellstream_contract' }));
else describe.skip('ReadStore contract: MongoDB (no Docker engine or MONGODB_URL)', () => it('skipped', () => {}));
