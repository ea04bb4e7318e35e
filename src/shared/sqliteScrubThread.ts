import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { BUSY_TIMEOUT_MS } from './sqliteWriteLock.js';
import { eraseOnDelete } from './sqlitePurge.js';
import { scrubPass } from './sqliteScrubPass.js';

/**
 * The thread of one scrub (sqliteScrub.ts). Its connection waits for the write lock only a couple
 * of milliseconds inside SQLite, like the service's; the pass sleeps out of any transaction
 * before trying again, so that it never holds the lock while it waits.
 */
const { path, holder } = workerData as { path: string; holder: string };
const sleeper = new Int32Array(new SharedArrayBuffer(4));
let db: Database.Database | null = null;
try {
  db = new Database(path, { fileMustExist: true });
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  eraseOnDelete(db);
  // The copy's indexes are written in their own order, not the table's: a cache that holds them
  // keeps each step short. The scrub's own commits need not reach the disk one by one (a crash
  // mid-scrub is finished by the next one; the service's FULL commits sync what came before
  // them), and it folds what it wrote into the file itself, in its pauses.
  db.pragma('cache_size = -65536');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');
  const report = scrubPass(db, {
    holder,
    sleep: (ms) => void Atomics.wait(sleeper, 0, 0, ms),
    afterCommit: () => void db!.pragma('wal_checkpoint(PASSIVE)'),
  });
  parentPort!.postMessage({ ok: true, report });
} catch (err) {
  parentPort!.postMessage({ ok: false, message: (err as Error).message });
} finally {
  db?.close();
}
