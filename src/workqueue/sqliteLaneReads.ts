import type Database from 'better-sqlite3';
import type { LaneAnswer, LaneCandidate, LaneRead } from './fairLanes.js';
import type { Job } from './workQueue.js';
import { limitSql } from '../shared/sqliteLimit.js';

/**
 * A row of the embedded queue's jobs table (sqliteWorkQueue.ts): the job's fields of one word as
 * they are, the others in snake case, JSON as text, the lane '' for none.
 */
export type JobRow = Pick<Job, 'id' | 'kind' | 'key' | 'lock' | 'state' | 'priority' | 'attempts' | 'holder' | 'generation'> & {
  run_at: number;
  max_attempts: number;
  lane_tenant: string;
  lane_user: string;
  lease_expires_at: number | null;
  payload: string;
  progress: string;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  attempted_at: number | null;
  finished_at: number | null;
  expires_at: number | null;
};

/** A fair pick's candidate (fairLanes.ts) with the row it stands for. */
export type Lane = LaneCandidate & { row: JobRow };

const LOCK_FREE = `(lock IS NULL OR NOT EXISTS (SELECT 1 FROM jobs AS r WHERE r.lock = jobs.lock AND r.state = 'running'))`;
/** The first due job whose lock no running job holds: of the kind, or of one tenant's lane, or of one user's lane within it. */
const candidate = (lane: string) => `SELECT * FROM jobs WHERE kind = ? ${lane}AND state = 'available' AND run_at <= ? AND ${LOCK_FREE} ORDER BY priority, run_at, id LIMIT 1`;
/** The first lane name of the kind's available jobs (a skip-scan of the lanes' index), after a given one or of all. */
const next = (column: string, scope: string, after: string) => `SELECT ${column} AS lane FROM jobs WHERE kind = ? ${scope}AND state = 'available' ${after}ORDER BY ${column} LIMIT 1`;

/**
 * The embedded queue's answers to a fair pick's reads (fairLanes.ts), inside its write
 * transaction: each read one index seek, by a statement prepared once (a claim makes many).
 */
export class SqliteLaneReads {
  private readonly best: Database.Statement<[string, number], JobRow>;
  private readonly tenantBest: Database.Statement<[string, string, number], JobRow>;
  private readonly userBest: Database.Statement<[string, string, string, number], JobRow>;
  private readonly firstTenant: Database.Statement<[string], { lane: string }>;
  private readonly nextTenant: Database.Statement<[string, string], { lane: string }>;
  private readonly firstUser: Database.Statement<[string, string], { lane: string }>;
  private readonly nextUser: Database.Statement<[string, string, string], { lane: string }>;
  /** The running jobs of a tenant's lane, counted up to a limit, per limit (src/shared/sqliteLimit.ts). */
  private readonly running: (limit: number) => Database.Statement<[string, string], { n: number }>;

  /** `prepare` is the queue's statement cache. */
  constructor(prepare: (sql: string) => Database.Statement) {
    const typed = <P extends unknown[], R>(sql: string) => prepare(sql) as unknown as Database.Statement<P, R>;
    this.best = typed(candidate(''));
    this.tenantBest = typed(candidate('AND lane_tenant = ? '));
    this.userBest = typed(candidate('AND lane_tenant = ? AND lane_user = ? '));
    this.firstTenant = typed(next('lane_tenant', '', ''));
    this.nextTenant = typed(next('lane_tenant', '', 'AND lane_tenant > ? '));
    this.firstUser = typed(next('lane_user', 'AND lane_tenant = ? ', ''));
    this.nextUser = typed(next('lane_user', 'AND lane_tenant = ? ', 'AND lane_user > ? '));
    this.running = (limit) => typed(`SELECT count(*) AS n FROM (SELECT 1 FROM jobs WHERE kind = ? AND lane_tenant = ? AND state = 'running' ${limitSql(limit)})`);
  }

  /** Answers the reads of the picks of one claim, whose due time is `now`. */
  reader(now: number): (read: LaneRead) => LaneAnswer<Lane> {
    return (read) => {
      if (read.op === 'next') {
        if (read.tenant === undefined) return (read.after === null ? this.firstTenant.get(read.kind) : this.nextTenant.get(read.kind, read.after))?.lane;
        return (read.after === null ? this.firstUser.get(read.kind, read.tenant) : this.nextUser.get(read.kind, read.tenant, read.after))?.lane;
      }
      if (read.op === 'running') return this.running(read.limit).get(read.kind, read.tenant)!.n;
      const row =
        read.tenant === undefined
          ? this.best.get(read.kind, now)
          : read.user === undefined
            ? this.tenantBest.get(read.kind, read.tenant, now)
            : this.userBest.get(read.kind, read.tenant, read.user, now);
      return row ? laneOf(row) : undefined;
    };
  }
}

function laneOf(row: JobRow): Lane {
  return { tenant: row.lane_tenant, user: row.lane_user, priority: row.priority, runAt: row.run_at, id: row.id, row };
}
