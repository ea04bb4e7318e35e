import Database from 'better-sqlite3';
import { eraseOnDelete } from '../shared/sqlitePurge.js';
import { BUSY_TIMEOUT_MS } from '../shared/sqliteWriteLock.js';
import { SqliteGroupCommit } from '../shared/sqliteGroupCommit.js';
import { LaneCursors, pickFair, pickFairSync } from './fairLanes.js';
import { SqliteLaneReads, type JobRow as Row, type Lane } from './sqliteLaneReads.js';
import { limitSql } from '../shared/sqliteLimit.js';
import { checkClaim, checkLeaseMs, checkLimit, checkName, checkTime, claimOrder, errorText, jsonText, newJob } from './jobInput.js';
import {
  DEFAULT_RETENTION_MS,
  defaultBackoff,
  LostLeaseError,
  MAX_LIST,
  TAKEOVER_BATCH,
  type Claimed,
  type ClaimRequest,
  type DeadLetterQuery,
  type Enqueued,
  type Job,
  type JobLease,
  type JobState,
  type Json,
  type NewJob,
  type QueueOptions,
  type ReplayOutcome,
  type WorkQueue,
} from './workQueue.js';


/**
 * The jobs table. Partial indexes keep each one to the rows it serves: due jobs by kind in claim
 * order (a claim reads the first row of the range and stops), and by kind, tenant and user (the
 * fair claim's skip-scans and best jobs, fairLanes.ts; running ones counted per tenant), running jobs by lease expiry (the
 * take-over), live keys and running locks unique (the storage itself refuses a second live job
 * of a key or a second running job of a lock, whatever the code above it does), dead letters
 * newest first, and the expiry of finished jobs (the bounded purge).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, key TEXT, lock TEXT, state TEXT NOT NULL,
  priority INTEGER NOT NULL, run_at INTEGER NOT NULL, attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL,
  lane_tenant TEXT NOT NULL DEFAULT '', lane_user TEXT NOT NULL DEFAULT '', holder TEXT, generation INTEGER NOT NULL, lease_expires_at INTEGER,
  payload TEXT NOT NULL, progress TEXT NOT NULL, last_error TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, attempted_at INTEGER, finished_at INTEGER, expires_at INTEGER);`;

/** Columns added after the first release: a queue file from before gets them (its jobs in the lane ''). */
const ADDED_COLUMNS = [`lane_tenant TEXT NOT NULL DEFAULT ''`, `lane_user TEXT NOT NULL DEFAULT ''`];

const INDEXES = `
CREATE INDEX IF NOT EXISTS jobs_tenant_due ON jobs (kind, lane_tenant, priority, run_at, id) WHERE state = 'available';
CREATE INDEX IF NOT EXISTS jobs_user_due ON jobs (kind, lane_tenant, lane_user, priority, run_at, id) WHERE state = 'available';
CREATE INDEX IF NOT EXISTS jobs_tenant_running ON jobs (kind, lane_tenant) WHERE state = 'running';
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (kind, priority, run_at, id) WHERE state = 'available';
CREATE INDEX IF NOT EXISTS jobs_leases ON jobs (lease_expires_at, id) WHERE state = 'running';
CREATE UNIQUE INDEX IF NOT EXISTS jobs_live_key ON jobs (kind, key) WHERE key IS NOT NULL AND state IN ('available', 'running');
CREATE UNIQUE INDEX IF NOT EXISTS jobs_running_lock ON jobs (lock) WHERE lock IS NOT NULL AND state = 'running';
CREATE INDEX IF NOT EXISTS jobs_dead ON jobs (finished_at, id) WHERE state = 'dead';
CREATE INDEX IF NOT EXISTS jobs_dead_by_kind ON jobs (kind, finished_at, id) WHERE state = 'dead';
CREATE INDEX IF NOT EXISTS jobs_dead_key ON jobs (kind, key, finished_at) WHERE state = 'dead';
CREATE INDEX IF NOT EXISTS jobs_expiry ON jobs (expires_at) WHERE expires_at IS NOT NULL;`;

const LIVE = `state IN ('available', 'running')`;
const FENCE = `id = @jobId AND holder = @holder AND generation = @generation AND state = 'running'`;
type TurnCall = { body: () => unknown; resolve: (value: unknown) => void; reject: (err: unknown) => void };

const COLUMNS = [
  'id', 'kind', 'key', 'lock', 'state', 'priority', 'run_at', 'attempts', 'max_attempts', 'lane_tenant', 'lane_user', 'holder', 'generation', 'lease_expires_at',
  'payload', 'progress', 'last_error', 'created_at', 'updated_at', 'attempted_at', 'finished_at', 'expires_at',
] as const;
const INSERT_SQL = `INSERT INTO jobs (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})`;
/** A lease renewed (never shortened) and a job completed, each one fenced statement: the commonest writes of a running job. */
const RENEW_SQL = `UPDATE jobs SET lease_expires_at = max(coalesce(lease_expires_at, 0), @until), updated_at = @now, progress = coalesce(@progress, progress)
  WHERE ${FENCE} RETURNING lease_expires_at AS expiresAt`;
const COMPLETE_SQL = `UPDATE jobs SET state = 'completed', finished_at = @now, expires_at = @expires, lease_expires_at = NULL, updated_at = @now WHERE ${FENCE}`;
/** Whether any running job's lease expired: one seek of the leases index. */
const ANY_EXPIRED_SQL = `SELECT 1 AS found FROM jobs INDEXED BY jobs_leases WHERE state = 'running' AND lease_expires_at <= ? LIMIT 1`;

/**
 * The embedded work queue: its own SQLite file (`DATA_DIR/jobs.sqlite`), so a claim never waits
 * behind a projector transaction on the read models' write lock. Every write is one IMMEDIATE
 * transaction: of several processes sharing the file, SQLite's write lock lets one at a time
 * decide, and the decision reads what the previous one committed. Writes asked for in the same
 * turn of the event loop share one transaction, each in a savepoint (src/shared/sqliteGroupCommit.ts);
 * a group that finds the lock taken is retried after an asynchronous pause rather than sleeping
 * on the thread that serves HTTP.
 */
/** Prepared statements kept at most (then the cache starts again): a caller's `limit` makes one of its own (sqliteLimit.ts). */
const STATEMENT_CACHE = 500;

export class SqliteWorkQueue implements WorkQueue {
  readonly backend = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly clock: () => number;
  private readonly retentionMs: number;
  private readonly backoff: (attempts: number) => number;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly cursors = new LaneCursors();
  private readonly lanes: SqliteLaneReads;
  /** The calls of the current turn waiting for their shared write, by kind of call (writeInTurn). */
  private readonly turnCalls = new Map<string, TurnCall[]>();
  /**
   * Writes asked for together (enqueues, claims, renewals and outcomes of jobs running at once)
   * share one transaction and one fsync, each in its own savepoint and answered once durable.
   */
  private readonly commits: SqliteGroupCommit;

  constructor(options: { path: string } & QueueOptions) {
    this.clock = options.clock ?? Date.now;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.backoff = options.backoff ?? defaultBackoff;
    this.db = new Database(options.path);
    this.db.pragma('journal_mode = WAL');
    // An acknowledged enqueue or outcome is on disk.
    this.db.pragma('synchronous = FULL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // The savepoints of a turn's writes (a group of claims or outcomes in one) spilled their journals
    // to temporary files past 64 KiB; a queue's transactions are small, so they stay in memory
    // (docs/store-threads.md "Savepoint journals in memory").
    this.db.pragma('temp_store = MEMORY');
    eraseOnDelete(this.db);
    this.db.exec(SCHEMA);
    const has = new Set((this.db.pragma('table_info(jobs)') as { name: string }[]).map((c) => c.name));
    for (const column of ADDED_COLUMNS) if (!has.has(column.split(' ')[0]!)) this.db.exec(`ALTER TABLE jobs ADD COLUMN ${column}`);
    this.db.exec(INDEXES);
    this.lanes = new SqliteLaneReads((sql) => this.stmt(sql));
    this.commits = new SqliteGroupCommit(this.db);
  }

  async enqueue(input: NewJob, now = this.clock()): Promise<Enqueued> {
    const job = newJob(input, now);
    return this.writeInTurn('enqueue', () => {
      if (job.key !== null) {
        const live = this.liveRow(job.kind, job.key);
        if (live) {
          // A request for sooner or more urgent work hurries a job still waiting (a manual pull).
          if (live.state === 'available' && (job.runAt < live.run_at || job.priority < live.priority)) {
            this.set(live.id, { run_at: Math.min(live.run_at, job.runAt), priority: Math.min(live.priority, job.priority), updated_at: now });
          }
          return { job: toJob(this.row(live.id)!), created: false };
        }
      }
      this.stmt(INSERT_SQL).run(toRow(job));
      return { job, created: true };
    });
  }

  async claim(request: ClaimRequest): Promise<Claimed[]> {
    const now = request.now ?? this.clock();
    const { kinds, n, tenantCap } = checkClaim(request, now);
    return this.write(() => {
      this.takeOver(kinds, now);
      const claimed: Claimed[] = [];
      // Each pass takes each kind's next job in its lanes' turn (fairLanes.ts), the most urgent over
      // the kinds; a job it makes running holds its lock for the next pass's NOT EXISTS, so two jobs
      // of one lock are never taken together. A kind with no due job is not read again in this
      // transaction: taking jobs only ever removes candidates.
      let due = kinds;
      while (claimed.length < n && due.length > 0) {
        let best: Lane | undefined;
        const stillDue: string[] = [];
        for (const kind of due) {
          const lane = pickFairSync(pickFair<Lane>(kind, this.cursors, tenantCap), this.lanes.reader(now));
          if (!lane) continue;
          stillDue.push(kind);
          if (!best || claimOrder(lane, best) < 0) best = lane;
        }
        due = stillDue;
        if (!best) break;
        this.cursors.served(best.row.kind, best);
        const row = this.stmt<[string, number, number, number, string], Row>(
          `UPDATE jobs SET state = 'running', holder = ?, generation = generation + 1, attempts = attempts + 1,
             lease_expires_at = ?, attempted_at = ?, updated_at = ? WHERE id = ? RETURNING *`,
        ).get(request.holder, now + request.leaseMs, now, now, best.row.id)!;
        const job = toJob(row);
        claimed.push({ job, lease: { jobId: job.id, holder: request.holder, generation: job.generation, expiresAt: job.leaseExpiresAt! } });
      }
      return claimed;
    });
  }

  async heartbeat(lease: JobLease, options: { leaseMs: number; progress?: Json; now?: number }): Promise<JobLease> {
    const now = options.now ?? this.clock();
    checkLeaseMs(options.leaseMs);
    const progress = options.progress === undefined ? undefined : jsonText('progress', options.progress);
    return this.writeInTurn('heartbeat', () => {
      const renewed = this.stmt<[object], { expiresAt: number }>(RENEW_SQL).get({ ...lease, until: now + options.leaseMs, now, progress: progress ?? null });
      if (!renewed) throw new LostLeaseError(lease.jobId, lease.generation);
      return { ...lease, expiresAt: renewed.expiresAt };
    });
  }

  async complete(lease: JobLease, options: { now?: number } = {}): Promise<void> {
    const now = options.now ?? this.clock();
    await this.writeInTurn('complete', () => {
      const done = this.stmt<[object]>(COMPLETE_SQL).run({ ...lease, now, expires: now + this.retentionMs });
      if (done.changes === 0) throw new LostLeaseError(lease.jobId, lease.generation);
    });
  }

  async fail(lease: JobLease, options: { error: string; retryAt: number | null; progress?: Json; now?: number }): Promise<'available' | 'dead'> {
    const now = options.now ?? this.clock();
    if (options.retryAt !== null) checkTime('retryAt', options.retryAt);
    const progress = options.progress === undefined ? {} : { progress: jsonText('progress', options.progress) };
    return this.fenced(lease, (row) => {
      const outcome = { last_error: errorText(options.error), ...progress };
      if (row.attempts >= row.max_attempts) {
        this.finish(row.id, 'dead', now, outcome);
        return 'dead';
      }
      const runAt = options.retryAt ?? now + this.backoff(row.attempts);
      this.set(row.id, { ...outcome, state: 'available', run_at: runAt, lease_expires_at: null, updated_at: now });
      return 'available';
    });
  }

  async reschedule(lease: JobLease, options: { runAt: number; progress?: Json; now?: number }): Promise<void> {
    const now = options.now ?? this.clock();
    checkTime('runAt', options.runAt);
    const progress = options.progress === undefined ? {} : { progress: jsonText('progress', options.progress) };
    await this.fenced(lease, (row) =>
      this.set(row.id, { ...progress, state: 'available', run_at: options.runAt, attempts: 0, last_error: null, lease_expires_at: null, updated_at: now }),
    );
  }

  async park(lease: JobLease, options: { error: string; progress?: Json; now?: number }): Promise<void> {
    const now = options.now ?? this.clock();
    const progress = options.progress === undefined ? {} : { progress: jsonText('progress', options.progress) };
    await this.fenced(lease, (row) => this.finish(row.id, 'dead', now, { last_error: errorText(options.error), ...progress }));
  }

  async cancel(lease: JobLease, options: { reason: string; now?: number }): Promise<void> {
    const now = options.now ?? this.clock();
    await this.fenced(lease, (row) => this.finish(row.id, 'cancelled', now, { last_error: errorText(options.reason) }));
  }

  async cancelJob(id: string, options: { reason: string; now?: number }): Promise<boolean> {
    const now = options.now ?? this.clock();
    return this.write(() => {
      const row = this.stmt<[string], Row>(`SELECT * FROM jobs WHERE id = ? AND ${LIVE}`).get(id);
      if (!row) return false;
      // A running job's holder is fenced off: its next write finds another generation.
      this.finish(id, 'cancelled', now, { last_error: errorText(options.reason), generation: row.generation + 1 });
      return true;
    });
  }

  async get(id: string): Promise<Job | null> {
    const row = this.row(id);
    return row ? toJob(row) : null;
  }

  async findLive(kind: string, key: string): Promise<Job | null> {
    const row = this.liveRow(kind, key);
    return row ? toJob(row) : null;
  }

  async deadLetters(query: DeadLetterQuery = {}): Promise<Job[]> {
    const limit = checkLimit(query.limit, 100);
    const conditions = [`state = 'dead'`];
    const params: (string | number)[] = [];
    if (query.kind !== undefined) {
      conditions.push('kind = ?');
      params.push(checkName('kind', query.kind));
    }
    if (query.after) {
      conditions.push('(finished_at, id) < (?, ?)');
      params.push(query.after.finishedAt, query.after.id);
    }
    const sql = `SELECT * FROM jobs WHERE ${conditions.join(' AND ')} ORDER BY finished_at DESC, id DESC ${limitSql(limit)}`;
    return this.stmt<(string | number)[], Row>(sql).all(...params).map(toJob);
  }

  async replay(id: string, now = this.clock()): Promise<ReplayOutcome> {
    return this.write((): ReplayOutcome => {
      const row = this.row(id);
      if (row?.state !== 'dead') return { outcome: 'not_dead' };
      const live = row.key === null ? undefined : this.liveRow(row.kind, row.key);
      if (live) return { outcome: 'key_taken', live: toJob(live) };
      this.set(id, { state: 'available', attempts: 0, run_at: now, finished_at: null, lease_expires_at: null, updated_at: now });
      return { outcome: 'replayed', job: toJob(this.row(id)!) };
    });
  }

  async purgeDead(options: { ids?: readonly string[]; kind?: string; limit?: number }): Promise<number> {
    const limit = checkLimit(options.limit, MAX_LIST, 10_000);
    if (options.ids) {
      const ids = options.ids.slice(0, limit);
      if (ids.length === 0) return 0;
      return this.write(() => this.stmt(`DELETE FROM jobs WHERE state = 'dead' AND id IN (${ids.map(() => '?').join(', ')})`).run(...ids).changes);
    }
    const byKind = options.kind === undefined ? '' : 'AND kind = ?';
    const params = options.kind === undefined ? [] : [checkName('kind', options.kind)];
    return this.write(
      () => this.stmt(`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state = 'dead' ${byKind} ORDER BY finished_at, id ${limitSql(limit)})`).run(...params).changes,
    );
  }

  async lastDead(kind: string, key: string): Promise<Job | null> {
    const row = this.stmt<[string, string], Row>(`SELECT * FROM jobs WHERE kind = ? AND key = ? AND state = 'dead' ORDER BY finished_at DESC LIMIT 1`).get(kind, key);
    return row ? toJob(row) : null;
  }

  async purgeNaming(needle: string, options: { except?: { kind: string; key: string }; after?: string | null; limit?: number }): Promise<{ purged: number; next: string | null }> {
    checkName('needle', needle);
    const limit = checkLimit(options.limit, MAX_LIST, 10_000);
    return this.write(() => {
      // A page by the primary key, then the rows of it naming the needle: one bounded transaction.
      const page = this.stmt<[string], Row>(`SELECT * FROM jobs WHERE id > ? ORDER BY id ${limitSql(limit)}`).all(options.after ?? '');
      const doomed = page.filter((row) => !(row.kind === options.except?.kind && row.key === options.except.key) && namesNeedle(row, needle)).map((row) => row.id);
      const remove = this.stmt<[string]>('DELETE FROM jobs WHERE id = ?');
      for (const id of doomed) remove.run(id);
      return { purged: doomed.length, next: page.length < limit ? null : page[page.length - 1]!.id };
    });
  }

  async purgeExpired(options: { now?: number; limit?: number } = {}): Promise<number> {
    const now = options.now ?? this.clock();
    const limit = checkLimit(options.limit, MAX_LIST, 10_000);
    return this.write(() => this.stmt(`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE expires_at <= ? ORDER BY expires_at ${limitSql(limit)})`).run(now).changes);
  }

  async counts(): Promise<{ kind: string; state: JobState; count: number }[]> {
    return this.stmt<[], { kind: string; state: JobState; count: number }>('SELECT kind, state, count(*) AS count FROM jobs GROUP BY kind, state ORDER BY kind, state').all();
  }

  async close(): Promise<void> {
    this.commits.close();
    this.db.close();
  }

  /**
   * Running jobs of the claimed kinds whose lease expired go back to available (or to dead, their
   * attempts spent), one generation up, so their holder is fenced off and the claim that follows
   * may take them. Only the claimed kinds: a claimer whose clock runs ahead (a test's) or that
   * serves other kinds never takes another kind's job from its live holder.
   */
  private takeOver(kinds: readonly string[], now: number): void {
    // Nearly every claim finds no expired lease: one seek of the leases index says so.
    if (!this.stmt(ANY_EXPIRED_SQL).get(now)) return;
    // One named parameter per kind (a claim names at most 32): the statement cache keeps one per count.
    const named = Object.fromEntries(kinds.map((k, i) => [`k${i}`, k]));
    this.stmt(
      `UPDATE jobs SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'available' END,
         generation = generation + 1, lease_expires_at = NULL, updated_at = @now,
         finished_at = CASE WHEN attempts >= max_attempts THEN @now ELSE NULL END,
         last_error = 'the lease of ' || holder || ' expired before it finished'
       WHERE id IN (SELECT id FROM jobs INDEXED BY jobs_leases WHERE state = 'running' AND lease_expires_at <= @now
         AND kind IN (${kinds.map((_, i) => `@k${i}`).join(', ')}) ORDER BY lease_expires_at, id LIMIT @batch)`,
    ).run({ now, batch: TAKEOVER_BATCH, ...named });
  }

  /** Inside one write: the row as the lease holds it, or LostLeaseError. */
  private fenced<T>(lease: JobLease, change: (row: Row) => T): Promise<T> {
    return this.write(() => {
      const row = this.stmt<[JobLease], Row>(`SELECT * FROM jobs WHERE ${FENCE}`).get(lease);
      if (!row) throw new LostLeaseError(lease.jobId, lease.generation);
      return change(row);
    });
  }

  /** A job leaves the live states: completed and cancelled expire after the retention period. */
  private finish(id: string, state: 'completed' | 'dead' | 'cancelled', now: number, extra: Partial<Row>): void {
    const expires = state === 'dead' ? null : now + this.retentionMs;
    this.set(id, { ...extra, state, finished_at: now, expires_at: expires, lease_expires_at: null, updated_at: now });
  }

  private set(id: string, values: Partial<Row>): void {
    const columns = Object.keys(values);
    this.stmt(`UPDATE jobs SET ${columns.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`).run({ ...values, id });
  }

  private row(id: string): Row | undefined {
    return this.stmt<[string], Row>('SELECT * FROM jobs WHERE id = ?').get(id);
  }

  private liveRow(kind: string, key: string): Row | undefined {
    return this.stmt<[string, string], Row>(`SELECT * FROM jobs WHERE kind = ? AND key = ? AND key IS NOT NULL AND ${LIVE}`).get(kind, key);
  }

  private write<T>(body: () => T): Promise<T> {
    return this.commits.write(body);
  }

  /**
   * Calls of one kind asked for in one turn (the enqueues of a reactor's batch, the renewals and
   * completions of the jobs an ETL batch finished) run as one write of the group, in the order
   * asked, each answered with its own value or error: one savepoint for them all instead of one
   * each (issue 37). Only for bodies that make at most one change, by one statement (which SQLite
   * undoes whole when it fails), and then read: a body that throws has left nothing.
   */
  private writeInTurn<T>(name: string, body: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let calls = this.turnCalls.get(name);
      if (!calls) {
        const batch: TurnCall[] = (calls = []);
        this.turnCalls.set(name, batch);
        this.write(() => {
          this.turnCalls.delete(name);
          return batch.map((call): { ok: unknown } | { err: unknown } => {
            try {
              return { ok: call.body() };
            } catch (err) {
              // An error that ended the transaction (I/O, a full disk) fails the whole group.
              if (!this.db.inTransaction) throw err;
              return { err };
            }
          });
        }).then(
          (outcomes) => outcomes.forEach((o, i) => ('ok' in o ? batch[i]!.resolve(o.ok) : batch[i]!.reject(o.err))),
          (err: unknown) => batch.forEach((call) => call.reject(err)),
        );
      }
      calls.push({ body, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  private stmt<P extends unknown[] | [object] = unknown[], R = unknown>(sql: string): Database.Statement<P, R> {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      if (this.statements.size > STATEMENT_CACHE) this.statements.clear();
      this.statements.set(sql, s);
    }
    return s as unknown as Database.Statement<P, R>;
  }
}


function toRow(job: Job): Row {
  return {
    id: job.id, kind: job.kind, key: job.key, lock: job.lock, state: job.state, priority: job.priority, run_at: job.runAt,
    attempts: job.attempts, max_attempts: job.maxAttempts, lane_tenant: job.tenant ?? '', lane_user: job.user ?? '', holder: job.holder, generation: job.generation, lease_expires_at: job.leaseExpiresAt,
    payload: JSON.stringify(job.payload), progress: JSON.stringify(job.progress), last_error: job.lastError,
    created_at: job.createdAt, updated_at: job.updatedAt, attempted_at: job.attemptedAt, finished_at: job.finishedAt, expires_at: null,
  };
}

function toJob(row: Row): Job {
  return {
    id: row.id, kind: row.kind, key: row.key, lock: row.lock, state: row.state, priority: row.priority, runAt: row.run_at,
    attempts: row.attempts, maxAttempts: row.max_attempts, tenant: row.lane_tenant || null, user: row.lane_user || null, holder: row.holder, generation: row.generation, leaseExpiresAt: row.lease_expires_at,
    payload: JSON.parse(row.payload) as Json, progress: JSON.parse(row.progress) as Json, lastError: row.last_error,
    createdAt: row.created_at, updatedAt: row.updated_at, attemptedAt: row.attempted_at, finishedAt: row.finished_at,
  };
}

/** Whether any text the job keeps holds the needle (a user id): what erasure removes. */
function namesNeedle(row: Row, needle: string): boolean {
  return [row.key, row.lock, row.payload, row.progress, row.last_error, row.holder].some((text) => text !== null && text.includes(needle));
}
