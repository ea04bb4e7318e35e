import { join } from 'node:path';
import { describe, inject, it } from 'vitest';
import { MongoReadStore } from '../../src/readstore/mongoReadStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';
import { projectorRuntimeContract } from './projectorRuntimeContract.js';

const dir = tempDir();
let n = 0;
projectorRuntimeContract('embedded SQLite', async () => new SqliteReadStore({ path: join(dir, `read-${++n}.sqlite`) }));

const url = inject('mongodbUrl');
if (url) projectorRuntimeContract('MongoDB', async () => MongoReadStore.connect({ url, database: `wellstream_runtime_${++n}` }));
else describe.skip('projector runtime: dead letters and sequences (MongoDB: no Docker engine or MONGODB_URL)', () => it('skipped', () => {}));
