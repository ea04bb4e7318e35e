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
    expect(db.prepare("SELECT count(*) AS n FROM fingerprints WHERE typeof(job) = 'text'").get()).toEqual({ n: 0 });
  } finally {
    db.close();
  }
});
