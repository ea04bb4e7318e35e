import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobParked, JobRetry, type JobContext } from '../../../src/processes/jobs/jobHandler.js';
import { JobRunner } from '../../../src/processes/jobs/jobRunner.js';
import { SqliteWorkQueue } from '../../../src/workqueue/sqliteWorkQueue.js';
import { tempDir } from '../../support/tmp.js';

/**
 * Issue 26, the job runner: claims the kinds it serves up to each one's concurrency, renews each
 * lease at a third of it, aborts the handler's signal the moment a renewal finds the lease lost
 * (and then writes nothing), and writes the handler's ending fenced: complete, retry at a time,
 * park, and on a stop a job handed back due at once. Every wait is for a condition.
 */
const LEASE_MS = 300;
let queues: SqliteWorkQueue[] = [];
let runners: JobRunner[] = [];

afterEach(async () => {
  for (const r of runners) await r.stop();
  for (const q of queues) await q.close();
  runners = [];
  queues = [];
});

function setUp() {
  const queue = new SqliteWorkQueue({ path: join(tempDir('wellstream-jobrunner-'), 'jobs.sqlite') });
  queues.push(queue);
  const runner = new JobRunner({ queue, holder: 'runner-a', leaseMs: LEASE_MS, pollMs: 10, transientBackoff: { firstMs: 1, maxMs: 4 } });
  runners.push(runner);
  return { queue, runner };
}

async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const released = () => {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
};

describe('JobRunner (issue 26)', () => {
  it('runs at most `concurrency` jobs of a kind at once, renewing their leases past many lease lengths, and completes each', async () => {
    const { queue, runner } = setUp();
    const gate = released();
    let running = 0;
    let most = 0;
    runner.register({
      kind: 'k',
      concurrency: 2,
      run: async () => {
        most = Math.max(most, ++running);
        await gate.promise;
        running--;
      },
    });
    const ids = await Promise.all([1, 2, 3, 4, 5].map(async (i) => (await queue.enqueue({ kind: 'k', key: `j${i}` })).job.id));
    runner.start();
    await until(() => runner.active === 2);
    await new Promise((r) => setTimeout(r, 4 * LEASE_MS));
    // Still held by this runner, one generation each: renewed, never taken back.
    const held = (await Promise.all(ids.map((id) => queue.get(id)))).filter((j) => j!.state === 'running');
    expect(held.map((j) => j!.generation)).toEqual([1, 1]);
    gate.release();
    await until(async () => (await Promise.all(ids.map((id) => queue.get(id)))).every((j) => j!.state === 'completed'));
    expect(most).toBe(2);
  });

  it('aborts the handler the moment a renewal finds the job taken over, and writes nothing for that attempt', async () => {
    const { queue, runner } = setUp();
    const gate = released();
    let signal: AbortSignal | null = null;
    runner.register({
      kind: 'k',
      concurrency: 1,
      run: async (context: JobContext) => {
        signal = context.signal;
        await gate.promise;
      },
    });
    const { job } = await queue.enqueue({ kind: 'k' });
    runner.start();
    const running = await until(async () => {
      const j = await queue.get(job.id);
      return j?.state === 'running' && j;
    });
    // Another holder takes it over, as if this runner had frozen past its lease.
    const [stolen] = await queue.claim({ kinds: ['k'], n: 1, holder: 'thief', leaseMs: 60_000, now: running.leaseExpiresAt! + 1 });
    await until(() => signal?.aborted);
    gate.release();
    await until(() => runner.active === 0);
    const after = (await queue.get(job.id))!;
    expect(after).toMatchObject({ state: 'running', holder: 'thief', generation: stolen!.job.generation });
  });

  it('writes the ending the handler asks for: a retry at its time, a park as a dead letter with its progress', async () => {
    const { queue, runner } = setUp();
    const retryAt = Date.now() + 3_600_000;
    runner.register({ kind: 'retry', concurrency: 1, run: async () => Promise.reject(new JobRetry('try later', retryAt)) });
    runner.register({ kind: 'park', concurrency: 1, run: async () => Promise.reject(new JobParked('never readable', { at: 3 })) });
    const retried = (await queue.enqueue({ kind: 'retry' })).job.id;
    const parked = (await queue.enqueue({ kind: 'park' })).job.id;
    runner.start();
    await until(async () => (await queue.get(parked))!.state === 'dead');
    await until(async () => (await queue.get(retried))!.attempts === 1 && (await queue.get(retried))!.state === 'available');
    expect(await queue.get(retried)).toMatchObject({ runAt: retryAt, lastError: 'try later' });
    expect(await queue.get(parked)).toMatchObject({ lastError: 'never readable', progress: { at: 3 } });
  });

  it('on stop, aborts its handlers and hands their jobs back due at once', async () => {
    const { queue, runner } = setUp();
    runner.register({
      kind: 'k',
      concurrency: 1,
      run: ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true })),
    });
    const { job } = await queue.enqueue({ kind: 'k' });
    runner.start();
    await until(() => runner.active === 1);
    const before = Date.now();
    await runner.stop();
    const after = (await queue.get(job.id))!;
    expect(after.state).toBe('available');
    expect(after.runAt).toBeLessThanOrEqual(Date.now());
    expect(after.runAt).toBeGreaterThanOrEqual(before);
  });

  it('issue 37: due jobs of a kind are taken as many in one claim as the kind has room for, even beside a kind of the same lease with room for one', async () => {
    const { queue, runner } = setUp();
    const claim = queue.claim.bind(queue);
    const taken: string[][] = [];
    queue.claim = async (request) => {
      const claimed = await claim(request);
      if (claimed.length > 0) taken.push(claimed.map((c) => c.job.kind));
      return claimed;
    };
    const gate = released();
    for (const kind of ['small', 'one']) runner.register({ kind, concurrency: kind === 'small' ? 4 : 1, run: () => gate.promise });
    for (let i = 0; i < 4; i++) await queue.enqueue({ kind: 'small', key: `s${i}` });
    await queue.enqueue({ kind: 'one', key: 'o' });
    runner.start();
    try {
      await until(() => runner.active === 5);
      expect(taken.map((kinds) => kinds.join(',')).sort()).toEqual(['one', 'small,small,small,small']);
    } finally {
      gate.release();
    }
    await until(() => runner.active === 0);
  });
});

describe('JobRunner claims of one round (issue 37)', () => {
  it('asks for the claims of kinds of different room together (one message and one transaction on the embedded queue), and a claim that fails leaves the jobs the others took running', async () => {
    const { queue, runner } = setUp();
    const claim = queue.claim.bind(queue);
    const events: string[] = [];
    queue.claim = async (request) => {
      const name = request.kinds.join(',');
      events.push(`asked ${name}`);
      if (name === 'broken') throw new Error('this claim fails');
      const claimed = await claim(request);
      events.push(`answered ${name}`);
      return claimed;
    };
    const done: string[] = [];
    runner.register({ kind: 'small', concurrency: 2, run: async (context) => void done.push(context.job.key!) });
    runner.register({ kind: 'broken', concurrency: 1, run: async () => {} });
    await queue.enqueue({ kind: 'small', key: 's0' });
    runner.start();
    await until(() => done.length === 1);
    expect(done).toEqual(['s0']);
    expect(events.slice(0, 3)).toEqual(['asked small', 'asked broken', 'answered small']);
    await until(async () => (await queue.findLive('small', 's0')) === null);
  });
});

describe('JobRunner and store failures (contracts §19)', () => {
  it('contracts §19: a job whose handler fails with SQLITE_BUSY or ECONNRESET far more often than its attempts is run again until the store answers, spends one attempt and completes; any other error still fails the attempt', async () => {
    const { queue, runner } = setUp();
    let calls = 0;
    runner.register({
      kind: 'busy',
      concurrency: 1,
      run: async () => {
        calls++;
        if (calls <= 10) throw Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
        if (calls <= 20) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
      },
    });
    runner.register({
      kind: 'broken',
      concurrency: 1,
      run: async () => {
        throw Object.assign(new Error('UNIQUE constraint failed'), { name: 'SqliteError', code: 'SQLITE_CONSTRAINT_UNIQUE' });
      },
    });
    const busy = (await queue.enqueue({ kind: 'busy', maxAttempts: 2 })).job.id;
    const broken = (await queue.enqueue({ kind: 'broken', maxAttempts: 2 })).job.id;
    runner.start();
    await until(async () => (await queue.get(busy))!.state === 'completed');
    expect(calls).toBe(21);
    expect((await queue.get(busy))!.attempts).toBe(1);
    await until(async () => (await queue.get(broken))!.state === 'dead');
  });
});
