import type Database from 'better-sqlite3';
import { isBusy, nextPause } from './sqliteWriteLock.js';

/** How long a queued write waits for another connection's write lock before it fails. */
const BUSY_GIVE_UP_MS = 60_000;

type Queued = { body: () => unknown; queuedAt: number; resolve: (value: unknown) => void; reject: (err: unknown) => void };

/**
 * Group commit for one SQLite connection: writes asked for in the same turn of the event loop
 * share one IMMEDIATE transaction and so one fsync. Each runs in its own savepoint, in the order
 * it was asked for (each sees what the ones before it wrote), so one write's error leaves the
 * others alone, and each caller is answered only once the whole group is durable. A group that
 * finds the write lock taken by another connection (a thread, the CLI) is tried again after an
 * asynchronous pause, with whatever was asked for meanwhile, instead of sleeping on this thread
 * (sqliteWriteLock.ts): its writes must therefore be safe to run again, as whole transactions are.
 */
export class SqliteGroupCommit {
  private queue: Queued[] = [];
  private busyPause = 0;
  private closed = false;

  /** `onCommit` hears the values of a committed group's writes that succeeded, in order. */
  constructor(
    private readonly db: Database.Database,
    private readonly onCommit: (values: unknown[]) => void = () => {},
  ) {}

  /** Runs `body` in the next group's transaction; resolves with its value once that group is durable. */
  write<T>(body: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) return reject(new Error('the database is closed'));
      this.queue.push({ body, queuedAt: Date.now(), resolve: resolve as (v: unknown) => void, reject });
      if (this.queue.length === 1) setImmediate(() => this.commit());
    });
  }

  /** Refuses writes from now on and fails those still waiting. */
  close(): void {
    this.closed = true;
    const group = this.queue;
    this.queue = [];
    for (const w of group) w.reject(new Error('the database is closed'));
  }

  private commit(): void {
    const group = this.queue;
    this.queue = [];
    if (group.length === 0) return;
    const outcomes: ({ ok: unknown } | { err: unknown })[] = [];
    try {
      this.db
        .transaction(() => {
          outcomes.length = 0;
          for (const w of group) {
            try {
              outcomes.push({ ok: this.db.transaction(w.body)() });
            } catch (err) {
              // Some SQLite errors (I/O, full disk) roll back the whole transaction, not just the
              // savepoint: then nothing of the group stands and every caller must hear so.
              if (!this.db.inTransaction) throw err;
              outcomes.push({ err });
            }
          }
        })
        .immediate();
    } catch (err) {
      if (isBusy(err) && !this.closed && Date.now() - group[0]!.queuedAt < BUSY_GIVE_UP_MS) {
        this.queue = [...group, ...this.queue];
        this.busyPause = nextPause(this.busyPause);
        setTimeout(() => this.commit(), this.busyPause);
        return;
      }
      for (const w of group) w.reject(err);
      return;
    }
    this.busyPause = 0;
    const values: unknown[] = [];
    group.forEach((w, i) => {
      const o = outcomes[i]!;
      if ('ok' in o) {
        values.push(o.ok);
        w.resolve(o.ok);
      } else w.reject(o.err);
    });
    this.onCommit(values);
  }
}
