import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { emptyWriteAheadLogBlocking } from './sqlitePurge.js';

/**
 * The thread of one rewrite (sqliteRewrite.ts): VACUUM, then the write-ahead log folded back and
 * emptied. Both are synchronous in better-sqlite3, and VACUUM of a large file takes seconds,
 * so they run here rather than on a thread that serves requests. This connection may wait for
 * the write lock (SQLite's own busy handler, sleeping in this thread): the service's other
 * connections hold it for at most a few hundred milliseconds at a time.
 */
const { path, busyMs } = workerData as { path: string; busyMs: number };
let db: Database.Database | null = null;
try {
  db = new Database(path, { fileMustExist: true });
  db.pragma(`busy_timeout = ${busyMs}`);
  db.pragma('secure_delete = ON');
  db.exec('VACUUM');
  emptyWriteAheadLogBlocking(db);
  parentPort!.postMessage({ ok: true });
} catch (err) {
  parentPort!.postMessage({ ok: false, message: (err as Error).message });
} finally {
  db?.close();
}
