import { join } from 'node:path';
import { describe, inject, it } from 'vitest';
import { KurrentDBEventStore } from '../../src/eventstore/kurrentDBEventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { ThreadedSqliteEventStore } from '../../src/eventstore/threadedSqliteEventStore.js';
import { tempDir } from '../support/tmp.js';
import { eventStoreContract } from './eventStoreContract.js';

const dir = tempDir();
let n = 0;
eventStoreContract('embedded SQLite', async () => new SqliteEventStore({ path: join(dir, `events-${n++}.sqlite`), pollIntervalMs: 20 }));
// The service's store (issue 37): writes on a writer thread of their own, reads and subscriptions here.
eventStoreContract('embedded SQLite, writes on a thread of their own', () => ThreadedSqliteEventStore.open({ path: join(dir, `events-${n++}.sqlite`), pollIntervalMs: 20 }));

const url = inject('eventstoreUrl');
if (url) eventStoreContract('KurrentDB', async () => new KurrentDBEventStore({ connectionString: url }));
else describe.skip('EventStore contract: KurrentDB (no Docker engine or EVENTSTORE_URL)', () => it('skipped', () => {}));
