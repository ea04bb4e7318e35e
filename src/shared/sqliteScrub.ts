import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { scrubInterrupted, scrubPass, type ScrubReport } from './sqliteScrubPass.js';
import type { Worker } from 'node:worker_threads';
import { siblingModule, startWorker } from './workerThreads.js';

/**
 * Scrubs a SQLite file after erasures (sqliteScrubPass.ts: the tables an erasure deleted rows
 * from are rebuilt a chunk at a time, never holding the write lock for long; then the log is
 * emptied), so that no byte of a deleted row is left anywhere in it (docs/erasure.md, "Physical
 * deletion"). Nothing marked, nothing done: an erasure that deleted nothing costs one read.
 *
 * The scrub runs in a thread of its own, with a connection of its own: better-sqlite3 is
 * synchronous, and the scrub sleeps between its transactions.
 *
 * Calls share scrubs: a call while one runs waits for the next, which starts once the running one
 * ended, so every caller's deletions (committed before its call) are covered; any number of calls
 * meanwhile share that next one.
 */
export class SqliteScrub {
  private running: Promise<ScrubReport> | null = null;
  private next: Promise<ScrubReport> | null = null;
  private readonly holder = `${process.pid}-${randomUUID()}`;
  private worker: Worker | null = null;
  private closed = false;

  /**
   * `db`: the store's own connection, which tells whether anything is due (and, for a database
   * that has no file, as in tests, is scrubbed itself).
   */
  constructor(
    private readonly path: string,
    private readonly db: Database.Database,
  ) {}

  run(): Promise<ScrubReport> {
    if (this.closed) return Promise.reject(new Error(`scrubbing ${this.path}: the store is closed`));
    if (this.next) return this.next;
    if (!this.running) {
      this.running = this.scrub().finally(() => {
        this.running = null;
      });
      return this.running;
    }
    this.next = this.running
      .catch(() => undefined)
      .then(() => {
        this.next = null;
        return this.run();
      });
    return this.next;
  }

  private async scrub(): Promise<ScrubReport> {
    if (this.db.memory) return scrubPass(this.db, { sleep: () => {}, holder: this.holder });
    if (!this.db.prepare('SELECT 1 FROM _scrub_due LIMIT 1').get() && !scrubInterrupted(this.db)) {
      // Nothing deleted by an erasure since the last scrub (whose end emptied the log): nothing to do.
      return { tables: [], transactions: 0, longestHoldMs: 0, longestHoldIn: '' };
    }
    if (this.closed) throw new Error(`scrubbing ${this.path}: the store is closed`);
    const worker = startWorker(siblingModule(import.meta.url, 'sqliteScrubThread'), { workerData: { path: this.path, holder: this.holder } });
    this.worker = worker;
    const outcome = await new Promise<{ ok: true; report: ScrubReport } | { ok: false; message: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => resolve({ ok: false, message: `the scrub's thread exited (${code}) before it answered` }));
    });
    await worker.terminate();
    this.worker = null;
    if (!outcome.ok) throw new Error(`scrubbing ${this.path} failed: ${outcome.message}`);
    return outcome.report;
  }

  /**
   * Stops a running scrub and waits until its thread has ended, so that nothing opens or writes
   * the file after its store closed (a test's teardown met the scrub thread's files in a directory
   * it was removing). A scrub stopped half-way is finished at the next start (scrubInterrupted,
   * context.ts), as after a crash; its caller hears that it failed.
   */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (worker) await worker.terminate();
    await Promise.allSettled([this.running, this.next].filter((p) => p !== null));
  }
}
