import type Database from 'better-sqlite3';
import { withWriteLock } from '../shared/sqliteWriteLock.js';
import { LeaseLostError, type Fence, type Lease, type LeaseStore } from './leases.js';

type LeaseRow = { name: string; holder: string; generation: number; expires_at: number };

/** The leases table lives in the read store's file, beside the checkpoints it fences. */
export const LEASES_DDL = `CREATE TABLE IF NOT EXISTS _leases (
  name TEXT PRIMARY KEY, holder TEXT NOT NULL, generation INTEGER NOT NULL, expires_at INTEGER NOT NULL)`;

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
      this.db.prepare('UPDATE _leases SET expires_at = 0 WHERE name = ? AND holder = ? AND generation = ?').run(lease.name, lease.holder, lease.generation),
    );
  }

  async remove(lease: Lease): Promise<void> {
    await withWriteLock(() =>
      this.db.prepare('DELETE FROM _leases WHERE name = ? AND holder = ? AND generation = ?').run(lease.name, lease.holder, lease.generation),
    );
  }

  async get(name: string): Promise<Lease | null> {
    const row = this.row(name);
    return row ? { name: row.name, holder: row.holder, generation: row.generation, expiresAt: row.expires_at } : null;
  }

  private row(name: string): LeaseRow | undefined {
    return this.db.prepare<[string], LeaseRow>('SELECT * FROM _leases WHERE name = ?').get(name);
  }

  private write(lease: Lease): void {
    this.db
      .prepare(
        `INSERT INTO _leases (name, holder, generation, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, generation = excluded.generation, expires_at = excluded.expires_at`,
      )
      .run(lease.name, lease.holder, lease.generation, lease.expiresAt);
  }
}

/** Inside a write transaction: refuses a fenced write whose lease has moved on. */
export function checkFence(db: Database.Database, fence: Fence | undefined): void {
  if (!fence) return;
  const row = db.prepare<[string], { generation: number }>('SELECT generation FROM _leases WHERE name = ?').get(fence.lease);
  if (row?.generation !== fence.generation) throw new LeaseLostError(fence.lease, fence.generation, row?.generation ?? null);
}
