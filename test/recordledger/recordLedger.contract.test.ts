import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, inject, it } from 'vitest';
import { acquireMongoClient } from '../../src/readstore/mongoConnection.js';
import { FINGERPRINT_FORM_ID, MongoRecordLedger, RECORD_LEDGER, unclusteredRowsOf, type LedgerDoc } from '../../src/recordledger/mongoRecordLedger.js';
import { SqliteRecordLedger } from '../../src/recordledger/sqliteRecordLedger.js';
import { tempDir } from '../support/tmp.js';
import { memoryMongo } from '../workqueue/memoryMongo.js';
import { recordLedgerContract } from './recordLedgerContract.js';

const dir = tempDir();
const fromDocs = (docs: LedgerDoc[]) => docs.map((d) => ({ fp: Buffer.from(d.fp ?? d._id, 'base64'), job: Buffer.from(d.job, 'base64') }));

/** A ledger file as the previous version (user_version 2) left it, holding `rows`. */
function olderLedgerFile(rows: { fp: Buffer; job: Buffer; committed: boolean }[]): string {
  const path = join(dir, `ledger-${randomUUID()}.sqlite`);
  const db = new Database(path);
  db.exec('CREATE TABLE claims (fp BLOB NOT NULL, job BLOB NOT NULL, committed INTEGER NOT NULL, PRIMARY KEY (fp, job)) WITHOUT ROWID');
  const insert = db.prepare('INSERT INTO claims (fp, job, committed) VALUES (?, ?, ?)');
  for (const r of rows) insert.run(r.fp, r.job, r.committed ? 1 : 0);
  db.pragma('user_version = 2');
  db.close();
  return path;
}

recordLedgerContract('embedded SQLite', async () => {
  const path = join(dir, `ledger-${randomUUID()}.sqlite`);
  const ledger = new SqliteRecordLedger(path);
  const others: SqliteRecordLedger[] = [];
  return {
    withOlderRows: async (rows) => {
      const older = new SqliteRecordLedger(olderLedgerFile(rows));
      others.push(older);
      return older;
    },
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
    close: async () => {
      for (const o of others) await o.close();
      await ledger.close();
    },
  };
});

/** Rows as an earlier version of the MongoDB adapter wrote them. */
const olderDocs = (rows: { fp: Buffer; job: Buffer; committed: boolean }[]): LedgerDoc[] =>
  rows.map((r) => ({ _id: `${r.fp.toString('base64')}.${r.job.toString('base64')}`, fp: r.fp.toString('base64'), job: r.job.toString('base64'), committed: r.committed }));

// The MongoDB adapter's logic against the in-memory stand-in (test/workqueue/memoryMongo.ts): runs everywhere.
recordLedgerContract('MongoDB adapter on an in-memory stand-in', async () => {
  const mongo = memoryMongo();
  const ledger = new MongoRecordLedger(mongo.db);
  return {
    ledger,
    another: async () => new MongoRecordLedger(mongo.db),
    rows: async () => fromDocs([...mongo.collection(RECORD_LEDGER).docs.values()] as LedgerDoc[]),
    close: () => ledger.close(),
    withOlderRows: async (rows) => {
      const older = memoryMongo();
      await older.db.collection<LedgerDoc>(RECORD_LEDGER).insertMany(olderDocs(rows));
      return new MongoRecordLedger(older.db, undefined, await unclusteredRowsOf(older.db.collection<LedgerDoc>(RECORD_LEDGER)));
    },
  };
});

const url = inject('mongodbUrl');
if (url) {
  recordLedgerContract('MongoDB', async () => {
    const database = `wellstream_ledger_${randomUUID().slice(0, 8)}`;
    const ledger = await MongoRecordLedger.connect({ url, database });
    const handle = await acquireMongoClient(url);
    const others: { database: string; ledger: MongoRecordLedger }[] = [];
    return {
      ledger,
      another: () => MongoRecordLedger.connect({ url, database }),
      // The rows, without the document that tells their form.
      rows: async () => fromDocs(await handle.client.db(database).collection<LedgerDoc>(RECORD_LEDGER).find({ _id: { $ne: FINGERPRINT_FORM_ID } }).toArray()),
      withOlderRows: async (rows) => {
        const older = `${database}_older`;
        await handle.client.db(older).collection<LedgerDoc>(RECORD_LEDGER).insertMany(olderDocs(rows));
        const opened = await MongoRecordLedger.connect({ url, database: older });
        others.push({ database: older, ledger: opened });
        return opened;
      },
      close: async () => {
        for (const o of others) {
          await handle.client.db(o.database).dropDatabase();
          await o.ledger.close();
        }
        await handle.client.db(database).dropDatabase();
        await handle.release();
        await ledger.close();
      },
    };
  });
} else describe.skip('RecordLedger contract: MongoDB (no Docker engine or MONGODB_URL)', () => it('skipped', () => {}));
