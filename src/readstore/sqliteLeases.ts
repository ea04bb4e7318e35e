import type Database from 'better-sqlite3';
import { withWriteLock } from '../shared/sqliteWriteLock.js';
import { LeaseLostError, type Fence, type Lease, type LeaseStore } from './leases.js';

type LeaseRow = { name: string; holder: string; generation: number; expires_at: number };

/** The leases table lives in the read store's file, beside the checkpoints it fences. */
export const LEASES_DDL = `CREATE TABLE IF NOT EXISTS _leases (
  name TEXT PRIMARY KEY, holder TEXT NOT NULL, generation INTEGER NOT NULL, expires_at INTEGER NOT NULL)`;

type LeaseStatements = {
  row: Database.Statement<[string], LeaseRow>;
  generation: Database.Statement<[string], { generation: number }>;
  write: Database.Statement<[string, string, number, number]>;
  release: Database.Statement<[string, string, number]>;
  remove: Database.Statement<[string, string, number]>;
};
const prepared = new WeakMap<Database.Database, LeaseStatements>();

/**
 * The leases table's statements, prepared once per connection: a fence is checked inside every
 * fenced write (each projector batch, each delivery outcome), and preparing its SQL each time cost
 * more than running it.
 */
function leaseStatements(db: Database.Database): LeaseStatements {
  let s = prepared.get(db);
  if (!s) {
    s = {
      row: db.prepare('SELECT * FROM _leases WHERE name = ?'),
      generation: db.prepare('SELECT generation FROM _leases WHERE name = ?'),
      write: db.prepare(
        `INSERT INTO _leases (name, holder, generation, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, generation = excluded.generation, expires_at = excluded.expires_at`,
      ),
      release: db.prepare('UPDATE _leases SET expires_at = 0 WHERE name = ? AND holder = ? AND generation = ?'),
      remove: db.prepare('DELETE FROM _leases WHERE name = ? AND holder = ? AND generation = ?'),
    };
    prepared.set(db, s);
  }
  return s;
}

/**
 * Leases on the embedded read store. Each operation is one IMMEDIATE transaction, so of several
 * processes racing for a free lease exactly one gets it (SQLite's write lock serialises them).
 */
export class SqliteLeases implements LeaseStore {
  constructor(private readonly db: Database.Database) {
    db.exec(LEASES_DDL);
  }

  async acquire(name: string, holder: string, ttlMs: number, now = Date.now()): Promise<Lease | null> {
    return withWriteLock(() =>
      this.db
        .transaction((): Lease | null => {
          const row = this.row(name);
          if (row && row.holder !== holder && row.expires_at > now) return null;
          // Continuing one's own unexpired lease keeps its generation; anything else is a new holding.
          const generation = row ? (row.holder === holder && row.expires_at > now ? row.generation : row.generation + 1) : 1;
          const lease = { name, holder, generation, expiresAt: now + ttlMs };
          this.write(lease);
          return lease;
        })
        .immediate(),
    );
  }

  async renew(lease: Lease, ttlMs: number, now = Date.now()): Promise<Lease | null> {
    return withWriteLock(() =>
      this.db
        .transaction((): Lease | null => {
          const row = this.row(lease.name);
          if (!row || row.holder !== lease.holder || row.generation !== lease.generation) return null;
          const renewed = { ...lease, expiresAt: Math.max(row.expires_at, now + ttlMs) };
          this.write(renewed);
          return renewed;
        })
        .immediate(),
    );
  }

  async release(lease: Lease): Promise<void> {
    await withWriteLock(() =>
      leaseStatements(this.db).release.run(lease.name, lease.holder, lease.generation),
    );
  }

  async remove(lease: Lease): Promise<void> {
    await withWriteLock(() =>
      leaseStatements(this.db).remove.run(lease.name, lease.holder, lease.generation),
    );
  }

  async get(name: string): Promise<Lease | null> {
    const row = this.row(name);
    return row ? { name: row.name, holder: row.holder, generation: row.generation, expiresAt: row.expires_at } : null;
  }

  private row(name: string): LeaseRow | undefined {
    return leaseStatements(this.db).row.get(name);
  }

  private write(lease: Lease): void {
    leaseStatements(this.db).write.run(lease.name, lease.holder, lease.generation, lease.expiresAt);
  }
}

/** Inside a write transaction: refuses a fenced write whose lease has moved on. */
export function checkFence(db: Database.Database, fence: Fence | undefined): void {
  if (!fence) return;
  const row = leaseStatements(db).generation.get(fence.lease);
  if (row?.generation !== fence.generation) throw new LeaseLostError(fence.lease, fence.generation, row?.generation ?? null);
}
