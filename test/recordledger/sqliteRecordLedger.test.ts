import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { EARLIER_FINGERPRINT_BYTES, FINGERPRINT_BYTES, JOB_TAG_BYTES, shortened } from '../../src/recordledger/recordLedger.js';
import { KNOWN_JOBS, SqliteRecordLedger } from '../../src/recordledger/sqliteRecordLedger.js';
import { tempDir } from '../support/tmp.js';

it('a ledger file of the first version loses the job names it held in the clear, and its rows still count as stored (docs/erasure.md)', async () => {
  const path = join(tempDir(), 'record-ledger.sqlite');
  const fp = randomBytes(EARLIER_FINGERPRINT_BYTES);
  const old = new Database(path);
  old.exec('CREATE TABLE fingerprints (fp BLOB PRIMARY KEY, job TEXT NOT NULL) WITHOUT ROWID');
  old.prepare('INSERT INTO fingerprints (fp, job) VALUES (?, ?)').run(fp, 'upload-3f0c-user-stream');
  old.close();

  const ledger = new SqliteRecordLedger(path);
  try {
    expect(await ledger.note(randomBytes(JOB_TAG_BYTES), [shortened(fp)])).toEqual([true]);
  } finally {
    await ledger.close();
  }
  const db = new Database(path, { readonly: true });
  try {
    expect(db.prepare("SELECT count(*) AS n FROM jobs WHERE typeof(tag) = 'text'").get()).toEqual({ n: 0 });
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

/**
 * Pages written to the file's write-ahead log so far: each commit appends the pages it changed
 * (at least one), and nothing here checkpoints (the log stays far below SQLite's automatic 1,000 pages).
 */
function walFrames(ledger: SqliteRecordLedger, path: string): number {
  const pageSize = (ledger as unknown as { db: Database.Database }).db.pragma('page_size', { simple: true }) as number;
  const header = 32;
  const frameHeader = 24;
  return (statSync(`${path}-wal`).size - header) / (frameHeader + pageSize);
}

it("issue 37: the notes and commits of the jobs an ETL thread runs at once share one transaction (one fsync), each answered as if alone, in the order asked", async () => {
  const path = join(tempDir(), 'record-ledger.sqlite');
  const ledger = new SqliteRecordLedger(path);
  try {
    const jobs = Array.from({ length: 20 }, () => randomBytes(JOB_TAG_BYTES));
    const shared = randomBytes(FINGERPRINT_BYTES);
    // Warm the file (its table's first pages), so the log counts only what the writes below add.
    await ledger.note(randomBytes(JOB_TAG_BYTES), [randomBytes(FINGERPRINT_BYTES)]);
    const before = walFrames(ledger, path);
    // In one turn: the first job claims and commits `shared`; each later job's note sees that commit.
    const answers = await Promise.all([
      ledger.note(jobs[0]!, [shared]),
      ledger.commit(jobs[0]!, [shared]).then(() => []),
      ...jobs.slice(1).map((job) => ledger.note(job, [shared, randomBytes(FINGERPRINT_BYTES)])),
    ]);
    expect(answers).toEqual([[false], [], ...jobs.slice(1).map(() => [true, false])]);
    // 21 writes alone would be 21 commits of one frame at least; together they are one (a few pages).
    expect(walFrames(ledger, path) - before).toBeLessThan(5);
  } finally {
    await ledger.close();
  }
});

it('issue 38: a row is an 11-byte fingerprint and a small job number (the tag once per job in `jobs`): 20,000 claimed and committed rows take under 26 bytes each on disk, 49 before', async () => {
  const path = join(tempDir(), 'record-ledger.sqlite');
  const ledger = new SqliteRecordLedger(path);
  try {
    for (let j = 0; j < 4; j++) {
      const job = randomBytes(JOB_TAG_BYTES);
      // As the ETL notes them: a cluster prefix per block of records (src/processes/etl/recordLedger.ts).
      for (let b = 0; b < 5; b++) {
        const cluster = randomBytes(3);
        const fps = Array.from({ length: 1000 }, () => Buffer.concat([cluster, randomBytes(FINGERPRINT_BYTES - 3)]));
        await ledger.note(job, fps);
        await ledger.commit(job, fps);
      }
    }
    const db = (ledger as unknown as { db: Database.Database }).db;
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(db.prepare('SELECT count(*) AS n FROM claims WHERE job % 2 = 1').get()).toEqual({ n: 20_000 });
    expect(statSync(path).size / 20_000).toBeLessThan(26);
  } finally {
    await ledger.close();
  }
});

it('issue 38: a ledger file of the version before short rows is converted once, and given back the space its rows took', async () => {
  const path = join(tempDir(), 'record-ledger.sqlite');
  const old = new Database(path);
  old.exec('CREATE TABLE claims (fp BLOB NOT NULL, job BLOB NOT NULL, committed INTEGER NOT NULL, PRIMARY KEY (fp, job)) WITHOUT ROWID');
  old.exec('CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID');
  const insert = old.prepare('INSERT INTO claims VALUES (?, ?, 1)');
  const job = randomBytes(JOB_TAG_BYTES);
  const fps = Array.from({ length: 20_000 }, () => randomBytes(EARLIER_FINGERPRINT_BYTES));
  old.transaction(() => fps.forEach((fp) => insert.run(fp, job)))();
  old.pragma('user_version = 3');
  old.close();
  const before = statSync(path).size;

  const ledger = new SqliteRecordLedger(path);
  try {
    expect(await ledger.note(randomBytes(JOB_TAG_BYTES), fps.slice(0, 3).map(shortened))).toEqual([true, true, true]);
    expect(await ledger.note(job, fps.slice(0, 3).map(shortened))).toEqual([false, false, false]);
    expect((ledger as unknown as { db: Database.Database }).db.pragma('user_version', { simple: true })).toBe(4);
  } finally {
    await ledger.close();
  }
  expect(statSync(path).size).toBeLessThan(before * 0.6);
});

it('hostile input is normal: an open ledger keeps at most KNOWN_JOBS job numbers in memory, and a job it forgot still finds its own claims (issue 35)', async () => {
  const path = join(tempDir(), 'record-ledger.sqlite');
  const ledger = new SqliteRecordLedger(path);
  try {
    const first = randomBytes(JOB_TAG_BYTES);
    const fp = randomBytes(FINGERPRINT_BYTES);
    expect(await ledger.note(first, [fp])).toEqual([false]);
    for (let i = 0; i < KNOWN_JOBS + 5; i++) await ledger.note(randomBytes(JOB_TAG_BYTES), [randomBytes(FINGERPRINT_BYTES)]);
    const numbers = (ledger as unknown as { numbers: Map<string, number> }).numbers;
    expect(numbers.size).toBe(KNOWN_JOBS);
    expect(numbers.has(first.toString('hex'))).toBe(false);
    // Its own claim answers false again (a resumed run decides as the first); another job sees it uncommitted, then committed.
    expect(await ledger.note(first, [fp])).toEqual([false]);
    expect(await ledger.note(randomBytes(JOB_TAG_BYTES), [fp])).toEqual([false]);
    await ledger.commit(first, [fp]);
    expect(await ledger.note(randomBytes(JOB_TAG_BYTES), [fp])).toEqual([true]);
  } finally {
    await ledger.close();
  }
});
