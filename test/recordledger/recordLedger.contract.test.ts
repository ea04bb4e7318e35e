import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, inject, it } from 'vitest';
import { acquireMongoClient } from '../../src/readstore/mongoConnection.js';
import { MongoRecordLedger, RECORD_LEDGER, type LedgerDoc } from '../../src/recordledger/mongoRecordLedger.js';
import { SqliteRecordLedger } from '../../src/recordledger/sqliteRecordLedger.js';
import { tempDir } from '../support/tmp.js';
import { memoryMongo } from '../workqueue/memoryMongo.js';
import { recordLedgerContract } from './recordLedgerContract.js';

const dir = tempDir();
const fromDocs = (docs: LedgerDoc[]) => docs.map((d) => ({ fp: Buffer.from(d.fp ?? d._id, 'base64'), job: Buffer.from(d.job, 'base64') }));

recordLedgerContract('embedded SQLite', async () => {
  const path = join(dir, `ledger-${randomUUID()}.sqlite`);
  const ledger = new SqliteRecordLedger(path);
  return {
    ledger,
    another: async () => new SqliteRecordLedger(path),
    rows: async () => {
      const db = new Database(path, { readonly: true });
      try {
        return db.prepare('SELECT fp, job FROM claims').all() as { fp: Buffer; job: Buffer }[];
      } finally {
        db.close();
      }
    },
    close: () => ledger.close(),
  };
});

// The MongoDB adapter's logic against the in-memory stand-in (test/workqueue/memoryMongo.ts): runs everywhere.
recordLedgerContract('MongoDB adapter on an in-memory stand-in', async () => {
  const mongo = memoryMongo();
  const ledger = new MongoRecordLedger(mongo.db);
  return {
    ledger,
    another: async () => new MongoRecordLedger(mongo.db),
    rows: async () => fromDocs([...mongo.collection(RECORD_LEDGER).docs.values()] as LedgerDoc[]),
    close: () => ledger.close(),
  };
});

const url = inject('mongodbUrl');
if (url) {
  recordLedgerContract('MongoDB', async () => {
    const database = `wellstream_ledger_${randomUUID().slice(0, 8)}`;
    const ledger = await MongoRecordLedger.connect({ url, database });
    const handle = await acquireMongoClient(url);
    return {
      ledger,
      another: () => MongoRecordLedger.connect({ url, database }),
      rows: async () => fromDocs(await handle.client.db(database).collection<LedgerDoc>(RECORD_LEDGER).find({}).toArray()),
      close: async () => {
        await handle.client.db(database).dropDatabase();
        await handle.release();
        await ledger.close();
      },
    };
  });
} else describe.skip('RecordLedger contract: MongoDB (no Docker engine or MONGODB_URL)', () => it('skipped', () => {}));
