import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { SqliteGroupCommit } from '../../src/shared/sqliteGroupCommit.js';
import { BUSY_TIMEOUT_MS } from '../../src/shared/sqliteWriteLock.js';
import { SqliteWorkQueue } from '../../src/workqueue/sqliteWorkQueue.js';
import { LostLeaseError } from '../../src/workqueue/workQueue.js';
import { tempDir } from '../support/tmp.js';

function open(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec('CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  return db;
}

/** A group commit on one connection to a new file, and another connection to watch what it committed. */
function twoConnections(deferredIdleMs?: number) {
  const path = join(tempDir(), 'g.sqlite');
  const db = open(path);
  const other = open(path);
  const commits = new SqliteGroupCommit(db, () => {}, deferredIdleMs);
  const insert = db.prepare<[string, number]>('INSERT INTO t (k, v) VALUES (?, ?)');
  const seen = () => other.prepare('SELECT count(*) FROM t').pluck().get() as number;
  return { db, other, commits, insert, seen };
}

describe('group commit of SQLite writes (issue 27)', () => {
  it('writes asked for in one turn commit as one group, in order, each seeing the ones before; a failing one leaves the others standing', async () => {
    const db = open(join(tempDir(), 'g.sqlite'));
    const groups: unknown[][] = [];
    const commits = new SqliteGroupCommit(db, (values) => groups.push(values));
    const insert = db.prepare<[string, number]>('INSERT INTO t (k, v) VALUES (?, ?)');
    const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM t');
    const writes = Array.from({ length: 10 }, (_, i) =>
      commits.write(() => {
        insert.run(i === 5 ? 'k-4' : `k-${i}`, i); // the sixth repeats a key: its savepoint alone is rolled back
        return count.get()!.n;
      }),
    );
    const outcomes = await Promise.allSettled(writes);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([1, 2, 3, 4, 5, 'failed', 6, 7, 8, 9]);
    expect(groups).toEqual([[1, 2, 3, 4, 5, 6, 7, 8, 9]]);
    expect(count.get()!.n).toBe(9);
    db.close();
  });

  it('a write alone in its group runs in the transaction itself: a failure leaves nothing of it and the writes after it commit', async () => {
    const db = open(join(tempDir(), 'g.sqlite'));
    const groups: unknown[][] = [];
    const commits = new SqliteGroupCommit(db, (values) => groups.push(values));
    const insert = db.prepare<[string, number]>('INSERT INTO t (k, v) VALUES (?, ?)');
    await commits.write(() => insert.run('a', 1).changes);
    // Two rows, then a failure: neither row stands.
    await expect(
      commits.write(() => {
        insert.run('b', 1);
        insert.run('c', 1);
        insert.run('a', 2);
      }),
    ).rejects.toThrow(/UNIQUE/);
    expect(db.inTransaction).toBe(false);
    await commits.write(() => insert.run('d', 1).changes);
    expect(db.prepare('SELECT k FROM t ORDER BY k').pluck().all()).toEqual(['a', 'd']);
    expect(groups).toEqual([[1], [1]]);
    db.close();
  });

  it('a group that finds the write lock held by another connection waits for it without blocking this thread, then commits whole', async () => {
    const path = join(tempDir(), 'g.sqlite');
    const db = open(path);
    const other = open(path);
    other.exec('BEGIN IMMEDIATE');
    const commits = new SqliteGroupCommit(db);
    const insert = db.prepare<[string, number]>('INSERT INTO t (k, v) VALUES (?, ?)');
    let done = 0;
    const writes = ['a', 'b'].map((k) => commits.write(() => insert.run(k, 1)).then(() => done++));
    // The lock is still held: this thread keeps turning, nothing is committed yet.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(done).toBe(0);
    other.exec('COMMIT');
    await Promise.all(writes);
    expect(db.prepare('SELECT k FROM t ORDER BY k').pluck().all()).toEqual(['a', 'b']);
    other.close();
    db.close();
  });

  it('with a spacing, writes asked for in the turns after a commit wait out the spacing and commit together; a write after a quiet spell commits in the next turn', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
    try {
      const { db, other, insert, seen } = twoConnections();
      const groups: unknown[][] = [];
      const commits = new SqliteGroupCommit(db, (values) => groups.push(values), undefined, 50);
      const first = commits.write(() => (insert.run('a', 1), 'a'));
      await vi.advanceTimersByTimeAsync(0);
      await first;
      expect(groups).toEqual([['a']]);
      // Three writes in three turns, all within the spacing of the first commit: one group at its end.
      const later: Promise<unknown>[] = [];
      for (const k of ['b', 'c', 'd']) {
        await vi.advanceTimersByTimeAsync(5);
        later.push(commits.write(() => (insert.run(k, 1), k)));
      }
      await vi.advanceTimersByTimeAsync(30);
      expect(seen()).toBe(1);
      await vi.advanceTimersByTimeAsync(10);
      await Promise.all(later);
      expect(groups).toEqual([['a'], ['b', 'c', 'd']]);
      expect(seen()).toBe(4);
      // Quiet for longer than the spacing: the next write is not held back.
      await vi.advanceTimersByTimeAsync(100);
      const lone = commits.write(() => (insert.run('e', 1), 'e'));
      await vi.advanceTimersByTimeAsync(0);
      await lone;
      expect(groups).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
      other.close();
      db.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('deferred writes (a rebuild’s batches) share one transaction that other connections do not see until a write that is not deferred commits it', async () => {
    const { db, other, commits, insert, seen } = twoConnections();
    await commits.write(() => insert.run('a', 1), { deferred: true });
    await commits.write(() => insert.run('b', 1), { deferred: true });
    // Answered, visible to this connection, not committed.
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(2);
    expect(seen()).toBe(0);
    await commits.write(() => insert.run('c', 1));
    expect(seen()).toBe(3);
    other.close();
    db.close();
  });

  it('deferred writes are committed after a bounded number of groups, and at close', async () => {
    const { db, other, commits, insert, seen } = twoConnections();
    let written = 0;
    // Each awaited write is a group of its own: the transaction cannot stay open for ever.
    while (seen() === 0) {
      await commits.write(() => insert.run(`k-${written}`, 1), { deferred: true });
      written++;
      expect(written).toBeLessThan(100);
    }
    expect(written).toBeGreaterThan(1);
    await commits.write(() => insert.run('last', 1), { deferred: true });
    expect(seen()).toBe(written);
    commits.close();
    expect(seen()).toBe(written + 1);
    other.close();
    db.close();
  });

  it('deferred writes are committed once no write followed for a while, so a writer that stops does not hold the write lock', async () => {
    const { db, other, commits, insert, seen } = twoConnections(5);
    await commits.write(() => insert.run('a', 1), { deferred: true });
    for (let turns = 0; db.inTransaction; turns++) {
      expect(turns).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(seen()).toBe(1);
    other.exec('BEGIN IMMEDIATE');
    other.exec('COMMIT');
    other.close();
    db.close();
  });

  it('a deferred write that fails leaves the deferred writes before it standing; one whose group SQLite rolls back takes the open transaction with it', async () => {
    const path = join(tempDir(), 'g.sqlite');
    const db = open(path);
    const commits = new SqliteGroupCommit(db);
    const insert = db.prepare<[string, number]>('INSERT INTO t (k, v) VALUES (?, ?)');
    await commits.write(() => insert.run('a', 1), { deferred: true });
    await expect(commits.write(() => insert.run('a', 2), { deferred: true })).rejects.toThrow(/UNIQUE/);
    await commits.write(() => insert.run('b', 1));
    expect(db.prepare('SELECT k FROM t ORDER BY k').pluck().all()).toEqual(['a', 'b']);
    await commits.write(() => insert.run('c', 1), { deferred: true });
    // ROLLBACK inside the group ends the whole transaction, as an I/O error does.
    await expect(
      commits.write(() => {
        db.exec('ROLLBACK');
        throw new Error('disk I/O error');
      }, { deferred: true }),
    ).rejects.toThrow(/I\/O/);
    expect(db.inTransaction).toBe(false);
    await commits.write(() => insert.run('d', 1));
    expect(db.prepare('SELECT k FROM t ORDER BY k').pluck().all()).toEqual(['a', 'b', 'd']);
    db.close();
  });

  it('the work queue answers writes made together each on its own: a renewal refused for a lost lease does not undo the enqueues beside it', async () => {
    const queue = new SqliteWorkQueue({ path: join(tempDir(), 'jobs.sqlite') });
    await queue.enqueue({ kind: 'etl', key: 'first' }, 0);
    const [claimed] = await queue.claim({ kinds: ['etl'], n: 1, holder: 'h', leaseMs: 1000, now: 0 });
    const stale = { ...claimed!.lease, generation: claimed!.lease.generation - 1 };
    const [a, lost, b] = await Promise.allSettled([
      queue.enqueue({ kind: 'etl', key: 'second' }, 1),
      queue.heartbeat(stale, { leaseMs: 1000, now: 1 }),
      queue.enqueue({ kind: 'etl', key: 'third' }, 1),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('fulfilled');
    expect(lost.status === 'rejected' && lost.reason).toBeInstanceOf(LostLeaseError);
    expect((await queue.findLive('etl', 'second'))?.state).toBe('available');
    expect((await queue.findLive('etl', 'third'))?.state).toBe('available');
    await queue.close();
  });
});
