import type Database from 'better-sqlite3';
import { isBusy, nextPause } from './sqliteWriteLock.js';

/** How long a queued write waits for another connection's write lock before it fails. */
const BUSY_GIVE_UP_MS = 60_000;

/**
 * Groups of deferred writes one transaction may hold before it commits: a rebuild's batches of
 * ~20,000 changes, so about 160,000 changes and a couple of seconds of the write lock.
 */
const MAX_DEFERRED_GROUPS = 8;

/**
 * A transaction deferred writes left open is committed once no write was asked for this long,
 * so that a writer that stops (a rebuild that failed in-process) does not hold the write lock
 * from other connections. Longer than the gaps between a rebuild's batches (a few hundred ms).
 */
const DEFERRED_IDLE_MS = 2000;

type Queued = { body: () => unknown; queuedAt: number; deferred: boolean; resolve: (value: unknown) => void; reject: (err: unknown) => void };

/**
 * Group commit for one SQLite connection: writes asked for in the same turn of the event loop
 * share one IMMEDIATE transaction and so one fsync. Each runs in its own savepoint, in the order
 * it was asked for (each sees what the ones before it wrote), so one write's error leaves the
 * others alone (a write alone in its transaction runs without one), and each caller is answered only once the whole group is durable. A group that
 * finds the write lock taken by another connection (a thread, the CLI) is tried again after an
 * asynchronous pause, with whatever was asked for meanwhile, instead of sleeping on this thread
 * (sqliteWriteLock.ts): its writes must therefore be safe to run again, as whole transactions are.
 */
export class SqliteGroupCommit {
  private queue: Queued[] = [];
  private busyPause = 0;
  private closed = false;
  /** Groups run in the transaction left open for deferred writes (0: none is open). */
  private deferredGroups = 0;
  private lastWriteAt = 0;
  private idleTimer: NodeJS.Timeout | null = null;

  /** When the last group began (performance.now()), for `spacingMs`. */
  private lastCommitAt = -Infinity;

  /**
   * `onCommit` hears the values of a committed group's writes that succeeded, in order (a group of
   * deferred writes once it ran). `spacingMs`: a group asked for within that long of the previous
   * one's start waits out the rest, so that writes arriving one after another in a burst share a
   * commit (and its pages) instead of each turn committing its own; a write after a quiet spell
   * still commits in the next turn. 0 (the default): every turn's writes commit in the next turn.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly onCommit: (values: unknown[]) => void = () => {},
    private readonly deferredIdleMs = DEFERRED_IDLE_MS,
    private readonly spacingMs = 0,
  ) {}

  /**
   * Runs `body` in the next group's transaction; resolves with its value once that group is
   * durable. `deferred`: resolves once it ran, and a group of deferred writes alone leaves its
   * transaction open for the next groups, committed with the next write that is not deferred,
   * after MAX_DEFERRED_GROUPS groups, once no write came for DEFERRED_IDLE_MS, or at close. For
   * writes that a crash redoes from the start anyway (a rebuild's batches): each commit rewrites
   * every page its transaction touched, and a rebuild's random record keys touch most of their
   * index in every batch (docs/rebuild.md). A deferred write's effects are lost with its
   * transaction when a later write of the same transaction fails so that SQLite rolls it all back
   * (I/O, full disk).
   */
  write<T>(body: () => T, options: { deferred?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) return reject(new Error('the database is closed'));
      this.lastWriteAt = Date.now();
      this.queue.push({ body, queuedAt: this.lastWriteAt, deferred: options.deferred === true, resolve: resolve as (v: unknown) => void, reject });
      if (this.queue.length === 1) this.scheduleCommit();
    });
  }

  /** Refuses writes from now on, fails those still waiting, and commits deferred writes. */
  close(): void {
    this.closed = true;
    this.endDeferred();
    const group = this.queue;
    this.queue = [];
    for (const w of group) w.reject(new Error('the database is closed'));
  }

  private scheduleCommit(): void {
    const wait = this.spacingMs > 0 ? this.lastCommitAt + this.spacingMs - performance.now() : 0;
    if (wait >= 1) setTimeout(() => this.commit(), wait);
    else setImmediate(() => this.commit());
  }

  private commit(): void {
    this.lastCommitAt = performance.now();
    const group = this.queue;
    this.queue = [];
    if (group.length === 0) return;
    const outcomes: ({ ok: unknown } | { err: unknown })[] = [];
    const defer = group.every((w) => w.deferred) && this.deferredGroups < MAX_DEFERRED_GROUPS;
    try {
      // Within a transaction left open, better-sqlite3 runs this one as a savepoint.
      // A write alone in a transaction of its own needs no savepoint: the transaction rolls back
      // exactly what the savepoint would, and a savepoint makes SQLite copy the original of every
      // page the write changes into a statement journal, a temporary file (the projector's live
      // batches: about 3 MB a batch, a third of its bytes written; BENCHMARKS.md, issue 38, H16-C).
      const alone = group.length === 1 && !defer && !this.db.inTransaction;
      if (defer && !this.db.inTransaction) this.db.exec('BEGIN IMMEDIATE');
      this.db
        .transaction(() => {
          outcomes.length = 0;
          if (alone) {
            outcomes.push({ ok: group[0]!.body() });
            return;
          }
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
      if (defer) {
        this.deferredGroups++;
        this.commitWhenIdle();
      } else this.endDeferred();
    } catch (err) {
      // A transaction still open here is the one deferred writes began: what it held goes with it.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.deferredGroups = 0;
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

  /** Commits the transaction deferred writes left open, if any. */
  private endDeferred(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.deferredGroups === 0) return;
    this.deferredGroups = 0;
    if (this.db.inTransaction) this.db.exec('COMMIT');
  }

  private commitWhenIdle(): void {
    if (this.idleTimer) return;
    const check = () => {
      this.idleTimer = null;
      if (this.deferredGroups === 0 || this.closed) return;
      const idleFor = Date.now() - this.lastWriteAt;
      // A group is queued or was asked for lately: it commits or defers again itself.
      if (this.queue.length > 0 || idleFor < this.deferredIdleMs) {
        this.idleTimer = setTimeout(check, Math.max(1, this.deferredIdleMs - idleFor)).unref();
        return;
      }
      try {
        this.endDeferred();
      } catch {
        // The deferred writes are lost with their transaction, as in a crash; the writer's next batch finds its checkpoint where it was.
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      }
    };
    this.idleTimer = setTimeout(check, this.deferredIdleMs).unref();
  }
}
