import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, inject, it } from 'vitest';
import { acquireMongoClient } from '../../src/readstore/mongoConnection.js';
import { FINGERPRINT_FORM_ID, MongoRecordLedger, RECORD_LEDGER, upgradeRows, type LedgerDoc } from '../../src/recordledger/mongoRecordLedger.js';
import { SqliteRecordLedger } from '../../src/recordledger/sqliteRecordLedger.js';
import { tempDir } from '../support/tmp.js';
import { memoryMongo } from '../workqueue/memoryMongo.js';
import { recordLedgerContract } from './recordLedgerContract.js';

const dir = tempDir();
const fromDocs = (docs: LedgerDoc[]) => docs.map((d) => ({ fp: Buffer.from(d.fp ?? d._id, 'base64'), job: Buffer.from(d.job, 'base64') }));

/** A ledger file as an earlier version left it, holding `rows`: before clustering (user_version 2), or just before short fingerprints (3). */
function olderLedgerFile(rows: { fp: Buffer; job: Buffer; committed: boolean }[], clustered = false): string {
  const path = join(dir, `ledger-${randomUUID()}.sqlite`);
  const db = new Database(path);
  db.exec('CREATE TABLE claims (fp BLOB NOT NULL, job BLOB NOT NULL, committed INTEGER NOT NULL, PRIMARY KEY (fp, job)) WITHOUT ROWID');
  const insert = db.prepare('INSERT INTO claims (fp, job, committed) VALUES (?, ?, ?)');
  for (const r of rows) insert.run(r.fp, r.job, r.committed ? 1 : 0);
  if (clustered) db.exec('CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID');
  db.pragma(`user_version = ${clustered ? 3 : 2}`);
  db.close();
  return path;
}

recordLedgerContract('embedded SQLite', async () => {
  const path = join(dir, `ledger-${randomUUID()}.sqlite`);
  const ledger = new SqliteRecordLedger(path);
  const others: SqliteRecordLedger[] = [];
  return {
    withOlderRows: async (rows, clustered) => {
      const older = new SqliteRecordLedger(olderLedgerFile(rows, clustered));
      others.push(older);
      return older;
    },
    ledger,
    another: async () => new SqliteRecordLedger(path),
    rows: async () => {
      const db = new Database(path, { readonly: true });
      try {
        // A row holds its job's number; `jobs` its tag.
        return db.prepare('SELECT c.fp AS fp, j.tag AS job FROM claims c JOIN jobs j ON j.n = c.job / 2').all() as { fp: Buffer; job: Buffer }[];
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
    withOlderRows: async (rows, clustered) => {
      const older = memoryMongo();
      const docs = older.db.collection<LedgerDoc>(RECORD_LEDGER);
      // The version before short fingerprints had written the form document when it first opened the collection.
      if (clustered) await (docs as unknown as { insertOne(d: object): Promise<unknown> }).insertOne({ _id: FINGERPRINT_FORM_ID, unclustered: false });
      await docs.insertMany(olderDocs(rows));
      return new MongoRecordLedger(older.db, undefined, await upgradeRows(docs));
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
      withOlderRows: async (rows, clustered) => {
        const older = `${database}_older`;
        const docs = handle.client.db(older).collection<LedgerDoc>(RECORD_LEDGER);
        if (clustered) await (docs as unknown as { insertOne(d: object): Promise<unknown> }).insertOne({ _id: FINGERPRINT_FORM_ID, unclustered: false });
        await docs.insertMany(olderDocs(rows));
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
