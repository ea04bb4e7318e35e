import type Database from 'better-sqlite3';
import { emptyWriteAheadLogBlocking } from './sqlitePurge.js';
import { siblingModule, startWorker } from './workerThreads.js';

/** How long the rewrite's connection waits for the write lock, and for readers to leave the log. */
const REWRITE_BUSY_MS = 60_000;

/**
 * Rewrites a SQLite file from its live rows (`VACUUM`), then empties its write-ahead log, so that
 * no byte of a deleted row is left anywhere in it (docs/erasure.md, "Physical deletion").
 *
 * `secure_delete` is not enough on its own: it zeroes a deleted row's cell and every freed page,
 * but when SQLite rebalances a B-tree (a page split, a row that grew, a merge after deletions) it
 * copies the live rows of a page to their new places and leaves the old copies in the page's
 * unallocated middle. When such a row is deleted later, only its live copy is zeroed. Measured
 * (test/shared/sqliteRewrite.test.ts): 10,000 rows of two users, half of them made longer by an
 * update, one user deleted with `secure_delete` on and the log truncated: 7 of the deleted user's
 * rows were still in the file, each in the unallocated space of a live leaf page; none after a
 * VACUUM.
 *
 * The rewrite runs in a thread of its own (2.6–3.0 s for a 413 MiB file on the benchmark machine,
 * `npm run bench -- erasure-rewrite`; better-sqlite3 would hold the caller's thread that long).
 * It holds the file's write lock while it runs: other connections' writes wait (their retries,
 * sqliteWriteLock.ts), reads go on from their snapshots.
 *
 * Calls share rewrites: a call while one runs waits for the next, which starts once the running
 * one ended, so every caller's deletions (committed before its call) are covered; any number of
 * calls meanwhile share that next one.
 */
export class SqliteRewrite {
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  /** `inMemory`: the connection of a database that has no file (tests), rewritten in place. */
  constructor(
    private readonly path: string,
    private readonly inMemory: Database.Database | null = null,
  ) {}

  run(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) {
      this.running = this.rewrite().finally(() => {
        this.running = null;
      });
      return this.running;
    }
    this.next = this.running
      .catch(() => {})
      .then(() => {
        this.next = null;
        return this.run();
      });
    return this.next;
  }

  private async rewrite(): Promise<void> {
    if (this.inMemory) {
      this.inMemory.exec('VACUUM');
      emptyWriteAheadLogBlocking(this.inMemory);
      return;
    }
    const worker = startWorker(siblingModule(import.meta.url, 'sqliteRewriteThread'), { workerData: { path: this.path, busyMs: REWRITE_BUSY_MS } });
    const outcome = await new Promise<{ ok: boolean; message?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => resolve({ ok: false, message: `the rewrite's thread exited (${code}) before it answered` }));
    });
    await worker.terminate();
    if (!outcome.ok) throw new Error(`rewriting ${this.path} failed: ${outcome.message}`);
  }
}
