import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteWorkQueue } from '../../src/workqueue/sqliteWorkQueue.js';
import { LostLeaseError } from '../../src/workqueue/workQueue.js';
import { tempDir } from '../support/tmp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = tempDir();

/** A parameter value for every placeholder, so a statement can be explained unbound. */
function explain(db: Database.Database, sql: string): string[] {
  const named = [...sql.matchAll(/@(\w+)/g)].map((m) => m[1]!);
  const params = named.length > 0 ? [Object.fromEntries(named.map((n) => [n, 0]))] : Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 0);
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
}

describe('SqliteWorkQueue (issue 26)', () => {
  it('every statement the queue runs reads through an index in the order it needs (no table scan, no sort), except the operator counts', async () => {
    const queue = new SqliteWorkQueue({ path: join(dir, 'plans.sqlite') });
    // Run every operation once so every statement is prepared.
    await queue.enqueue({ kind: 'k', key: 'a', lock: 'l' }, 0);
    await queue.enqueue({ kind: 'k', key: 'a', priority: -1 }, 0);
    await queue.enqueue({ kind: 'k', key: 'b' }, 0);
    const [a, b] = await queue.claim({ kinds: ['k', 'j'], n: 2, holder: 'h', leaseMs: 10, now: 0 });
    await queue.heartbeat(a!.lease, { leaseMs: 10, progress: 1, now: 1 });
    await queue.fail(a!.lease, { error: 'e', retryAt: null, now: 2 });
    await queue.park(b!.lease, { error: 'e', now: 2 });
    const [c] = await queue.claim({ kinds: ['k'], n: 1, holder: 'h', leaseMs: 10, now: 20_000 });
    await queue.cancel(c!.lease, { reason: 'r', now: 20_001 });
    await queue.enqueue({ kind: 'k', key: 'c' }, 0);
    const [d] = await queue.claim({ kinds: ['k'], n: 1, holder: 'h', leaseMs: 10, now: 30_000 });
    await queue.complete(d!.lease, { now: 30_001 });
    await queue.cancelJob(d!.job.id, { reason: 'r' });
    await queue.replay(b!.job.id, 40_000);
    await queue.findLive('k', 'a');
    await queue.get('x');
    await queue.deadLetters({ kind: 'k', after: { finishedAt: 1, id: 'x' } });
    await queue.deadLetters();
    await queue.purgeDead({ ids: ['x'] });
    await queue.purgeDead({ kind: 'k' });
    await queue.purgeDead({});
    await queue.purgeExpired({ now: 0 });
    const internals = queue as unknown as { db: Database.Database; statements: Map<string, unknown> };
    const sqls = [...internals.statements.keys()].filter((s) => !s.startsWith('INSERT') && !s.includes('GROUP BY'));
    expect(sqls.length).toBeGreaterThan(15);
    const unindexed = sqls.flatMap((sql) => {
      const plan = explain(internals.db, sql);
      // A scan of a partial index reads only the rows it holds, in order, up to the limit; a scan of
      // a subquery reads the rows its own (indexed, limited) search produced.
      return plan.some((d) => (/^SCAN /.test(d) && !/USING (COVERING )?INDEX/.test(d) && !/^SCAN \(subquery-\d+\)$/.test(d)) || d.includes('TEMP B-TREE')) ? [`${sql.replace(/\s+/g, ' ')} → ${plan.join('; ')}`] : [];
    });
    expect(unindexed).toEqual([]);
    // The claim reads due jobs of a kind in claim order straight from its index.
    const claimSql = sqls.find((s) => s.includes("WHERE kind = ? AND state = 'available' AND run_at <= ?"))!;
    expect(explain(internals.db, claimSql)[0]).toMatch(/USING INDEX jobs_due \(kind=\?\)/);
    // A lane's best job (contracts §18, fairLanes.ts) from its lane's index, in claim order.
    const tenantSql = sqls.find((s) => s.includes("WHERE kind = ? AND lane_tenant = ? AND state = 'available' AND run_at <= ?"))!;
    expect(explain(internals.db, tenantSql)[0]).toMatch(/USING INDEX jobs_tenant_due \(kind=\? AND lane_tenant=\?\)/);
    const userSql = sqls.find((s) => s.includes("WHERE kind = ? AND lane_tenant = ? AND lane_user = ? AND state = 'available' AND run_at <= ?"))!;
    expect(explain(internals.db, userSql)[0]).toMatch(/USING INDEX jobs_user_due \(kind=\? AND lane_tenant=\? AND lane_user=\?\)/);
    await queue.close();
  });

  it('three processes racing on one file (BEGIN IMMEDIATE, busy retries): every job is claimed by exactly one of them, and no claim trips the running-lock unique index', async () => {
    const path = join(dir, 'race.sqlite');
    const queue = new SqliteWorkQueue({ path });
    for (let i = 0; i < 300; i++) await queue.enqueue({ kind: 'race', key: `job-${i}`, ...(i % 3 === 0 ? { lock: `conn-${i % 7}` } : {}) });
    const children = ['proc-a', 'proc-b', 'proc-c'].map((holder) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/workqueue/claimWorker.ts', path, holder], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
      child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
      const ready = new Promise<void>((resolve, reject) => {
        const poll = setInterval(() => out.startsWith('ready\n') && (clearInterval(poll), resolve()), 20);
        child.once('exit', (code) => (clearInterval(poll), reject(new Error(`${holder} exited ${code} before ready: ${err}`))));
      });
      const done = new Promise<number | null>((resolve) => child.once('exit', resolve));
      return { child, ready, done, lines: () => out.split('\n').slice(1).filter(Boolean), err: () => err };
    });
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.child.stdin.end('go\n');
    const codes = await Promise.all(children.map((c) => c.done));
    expect(codes, children.map((c) => c.err()).join('\n')).toEqual([0, 0, 0]);
    const claims = children.flatMap((c) => c.lines().map((l) => l.split(' ')));
    const ids = claims.map(([, id]) => id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(300);
    // More than one process got work: the race was real.
    expect(new Set(claims.map(([holder]) => holder)).size).toBeGreaterThan(1);
    expect(await queue.counts()).toEqual([{ kind: 'race', state: 'completed', count: 300 }]);
    await queue.close();
  }, 60_000);

  it('issue 37: the enqueues, renewals and completions of one turn share one write, each caller answered with its own outcome: a key twice in the turn is one job, a lost lease fails alone', async () => {
    const queue = new SqliteWorkQueue({ path: join(dir, 'turns.sqlite') });
    const commits = (queue as unknown as { commits: { write: (body: () => unknown) => Promise<unknown> } }).commits;
    const write = commits.write.bind(commits);
    let writes = 0;
    commits.write = (body) => (writes++, write(body));
    const [a, b, again] = await Promise.all([
      queue.enqueue({ kind: 'k', key: 'a' }, 0),
      queue.enqueue({ kind: 'k', key: 'b' }, 0),
      queue.enqueue({ kind: 'k', key: 'a', priority: -1 }, 0),
    ]);
    expect(writes).toBe(1);
    expect([a!.created, b!.created, again!.created]).toEqual([true, true, false]);
    expect(again!.job).toMatchObject({ id: a!.job.id, priority: -1 });
    const [first, second] = await queue.claim({ kinds: ['k'], n: 2, holder: 'h', leaseMs: 10, now: 1 });
    writes = 0;
    const renewals = await Promise.allSettled([
      queue.heartbeat(first!.lease, { leaseMs: 100, now: 2 }),
      queue.heartbeat({ ...second!.lease, generation: second!.lease.generation + 1 }, { leaseMs: 100, now: 2 }),
    ]);
    expect(renewals[0]).toMatchObject({ status: 'fulfilled', value: { expiresAt: 102 } });
    expect(renewals[1]).toMatchObject({ status: 'rejected', reason: expect.any(LostLeaseError) });
    const completions = await Promise.allSettled([
      queue.complete({ ...first!.lease, holder: 'someone else' }, { now: 3 }),
      queue.complete(first!.lease, { now: 3 }),
      queue.complete(second!.lease, { now: 3 }),
    ]);
    expect(completions.map((c) => c.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(writes).toBe(2);
    expect(await queue.counts()).toEqual([{ kind: 'k', state: 'completed', count: 2 }]);
    await queue.close();
  });
  it('a caller choosing every row limit cannot grow the statement cache without bound (limits are written into the SQL)', async () => {
    const queue = new SqliteWorkQueue({ path: join(dir, 'limits.sqlite') });
    for (let limit = 1; limit <= 1000; limit++) {
      await queue.deadLetters({ kind: 'k', limit });
      await queue.purgeExpired({ now: 0, limit });
    }
    expect((queue as unknown as { statements: Map<string, unknown> }).statements.size).toBeLessThanOrEqual(501);
    queue.close();
  });
});
