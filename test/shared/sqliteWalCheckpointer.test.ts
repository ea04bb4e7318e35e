import { copyFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { WAL_CHECKPOINTS, WalCheckpointer, type WalCheckpointSettings } from '../../src/shared/sqliteWalCheckpointer.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

/** Waiting for the thread: a deadline for a condition, never a measure of speed. */
const THREAD_DEADLINE = { timeout: 20_000, interval: 10 };
const PAGE = 4096;

function walFile(): { path: string; db: Database.Database } {
  const path = join(tempDir('wellstream-walckpt-'), 'rows.sqlite');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  return { path, db };
}

/** `n` rows of about a page each, in one transaction. */
function writeRows(db: Database.Database, from: number, n: number): void {
  const insert = db.prepare('INSERT INTO rows (id, body) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = from; i < from + n; i++) insert.run(i, `${i}:`.padEnd(PAGE - 200, 'x'));
  })();
}

const bytes = (file: string) => statSync(file).size;
const rowsIn = (path: string) => {
  const reader = new Database(path, { readonly: true });
  try {
    return (reader.prepare('SELECT count(*) AS n FROM rows').get() as { n: number }).n;
  } finally {
    reader.close();
  }
};

const settings = (s: Partial<WalCheckpointSettings>): WalCheckpointSettings => ({ ...WAL_CHECKPOINTS, ...s });

describe("the read store's write-ahead log checkpointed on a thread of its own (issue 37: the HTTP thread never waits on the disk)", () => {
  it('a connection that leaves its checkpoints to the thread copies nothing into the database in its own commits, however large its log; by default SQLite does, inside the commit', async () => {
    const inline = walFile();
    const sizeBefore = bytes(inline.path);
    writeRows(inline.db, 0, 2000);
    // SQLite's default: the commit that finds the log past 1,000 pages checkpoints it, on the committing thread.
    expect(bytes(inline.path)).toBeGreaterThan(sizeBefore + 1000 * PAGE);
    inline.db.close();

    const left = walFile();
    // A thread that will not look at the log during the test: whatever reaches the database, the commit put it there.
    const checkpointer = WalCheckpointer.start(left.path, left.db, settings({ everyMs: 3_600_000 }));
    const leftBefore = bytes(left.path);
    writeRows(left.db, 0, 2000);
    expect(bytes(left.path)).toBe(leftBefore);
    expect(bytes(`${left.path}-wal`)).toBeGreaterThan(2000 * PAGE);
    await checkpointer.stop();
    left.db.close();
  });

  it('the thread copies the log into the database: the database file alone then holds every committed row', async () => {
    const { path, db } = walFile();
    const checkpointer = WalCheckpointer.start(path, db, settings({ everyMs: 10 }));
    writeRows(db, 0, 1500);
    await vi.waitFor(() => expect(bytes(path)).toBeGreaterThan(1500 * PAGE), THREAD_DEADLINE);
    await checkpointer.stop();
    // Copied and synced: a copy of the database file without its log reads every row.
    const copy = `${path}.copy`;
    copyFileSync(path, copy);
    expect(rowsIn(copy)).toBe(1500);
    db.close();
  });

  it("a log that a reader kept from starting over is emptied, file and all, once the reader has left: the log's size is bounded by what readers hold", async () => {
    const { path, db } = walFile();
    writeRows(db, 0, 1);
    const reader = new Database(path);
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM rows').get();
    const checkpointer = WalCheckpointer.start(path, db, settings({ everyMs: 10, restartBytes: 16 * PAGE, boundBytes: 64 * PAGE, restartWaitMs: 5 }));
    // The reader's snapshot needs the log's frames: nothing can start it over while it reads.
    writeRows(db, 1, 200);
    expect(bytes(`${path}-wal`)).toBeGreaterThan(200 * PAGE);
    reader.exec('COMMIT');
    reader.close();
    await vi.waitFor(() => expect(bytes(`${path}-wal`)).toBe(0), THREAD_DEADLINE);
    expect(rowsIn(path)).toBe(201);
    // Writes go on into the emptied log.
    writeRows(db, 201, 1);
    expect((db.prepare('SELECT count(*) AS n FROM rows').get() as { n: number }).n).toBe(202);
    await checkpointer.stop();
    db.close();
  });

  it('should the thread fail, the connection checkpoints in its own commits again, as SQLite does by default', async () => {
    const { db } = walFile();
    // A file the thread cannot open: it fails at its start.
    const checkpointer = WalCheckpointer.start(join(tempDir('wellstream-walckpt-'), 'missing', 'none.sqlite'), db);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await vi.waitFor(() => expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000), THREAD_DEADLINE);
    await checkpointer.stop();
    db.close();
  });

  it("the service's read store (walCheckpoints: 'thread'): its thread copies the log, and closing ends the thread before the store's own connection closes, the last", async () => {
    const path = join(tempDir('wellstream-walckpt-'), 'read.sqlite');
    const store = new SqliteReadStore({ path, walCheckpoints: 'thread' });
    await store.ensureCollections([{ name: 'notes', indexes: [] }]);
    const sizeBefore = bytes(path);
    const body = 'x'.repeat(PAGE);
    await store.applyChanges(Array.from({ length: 1500 }, (_, i) => ({ op: 'put' as const, collection: 'notes', doc: { _id: `n${i}`, body } })));
    expect(bytes(`${path}-wal`)).toBeGreaterThan(1500 * PAGE);
    await vi.waitFor(() => expect(bytes(path)).toBeGreaterThan(sizeBefore + 1500 * PAGE), THREAD_DEADLINE);
    await store.close();
    // The last connection to close folds the log in and removes it: the thread's was closed first.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const again = new SqliteReadStore({ path });
    expect(await again.count('notes')).toBe(1500);
    await again.close();
  });
});
