import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { FINGERPRINT_BYTES, JOB_TAG_BYTES } from '../../src/recordledger/recordLedger.js';
import { SqliteRecordLedger } from '../../src/recordledger/sqliteRecordLedger.js';
import { tempDir } from '../support/tmp.js';

it('a ledger file of the first version loses the job names it held in the clear, and its rows still count as stored (docs/erasure.md)', async () => {
  const path = join(tempDir(), 'record-ledger.sqlite');
  const fp = randomBytes(FINGERPRINT_BYTES);
  const old = new Database(path);
  old.exec('CREATE TABLE fingerprints (fp BLOB PRIMARY KEY, job TEXT NOT NULL) WITHOUT ROWID');
  old.prepare('INSERT INTO fingerprints (fp, job) VALUES (?, ?)').run(fp, 'upload-3f0c-user-stream');
  old.close();

  const ledger = new SqliteRecordLedger(path);
  try {
    expect(await ledger.note(randomBytes(JOB_TAG_BYTES), [fp])).toEqual([true]);
  } finally {
    await ledger.close();
  }
  const db = new Database(path, { readonly: true });
  try {
    expect(db.prepare("SELECT count(*) AS n FROM claims WHERE typeof(job) = 'text'").get()).toEqual({ n: 0 });
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'fingerprints'").get()).toEqual({ n: 0 });
  } finally {
    db.close();
  }
});

it('contracts §19 (issue 35): the ledger file is written with synchronous=FULL, as the log, so a power loss never makes it answer a resumed run otherwise', async () => {
  const path = join(tempDir(), 'record-ledger.sqlite');
  const ledger = new SqliteRecordLedger(path);
  try {
    // The connection's setting (2 = FULL): read through the adapter's own handle.
    expect((ledger as unknown as { db: Database.Database }).db.pragma('synchronous', { simple: true })).toBe(2);
  } finally {
    await ledger.close();
  }
});
