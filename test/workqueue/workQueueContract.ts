import { describe, expect, it } from 'vitest';
import { LostLeaseError, MAX_PAYLOAD_BYTES, type Claimed, type QueueOptions, type WorkQueue } from '../../src/workqueue/workQueue.js';

/**
 * The work queue's contract (issue 26, item 1), one suite for every adapter. Times are passed in,
 * so a lease expiring or a job falling due is a value, never a wait.
 */
export type OpenQueue = (options: QueueOptions) => Promise<{
  queue: WorkQueue;
  /** Another connection to the same queue (another process, as far as the store can tell). */
  another(): Promise<WorkQueue>;
  close(): Promise<void>;
  /** The back-off the queue really uses, when it cannot take the one asked for (a queue on a thread of its own takes none). */
  backoff?: (attempts: number) => number;
}>;

const LEASE = 10_000;
// A century: the dates it gives lie in the future, so a real server's TTL monitor never removes a job mid-test.
const RETENTION = 100 * 365 * 24 * 3600_000;

export function workQueueContract(name: string, open: OpenQueue) {
  describe(`WorkQueue contract: ${name}`, () => {
    const backoff = (attempts: number) => attempts * 1_000;
    const withQueue = async (body: (queue: WorkQueue, another: () => Promise<WorkQueue>, backoffUsed: (attempts: number) => number) => Promise<void>) => {
      const opened = await open({ retentionMs: RETENTION, backoff });
      try {
        await body(opened.queue, opened.another, opened.backoff ?? backoff);
      } finally {
        await opened.close();
      }
    };
    const claim = (queue: WorkQueue, now: number, holder = 'proc-a', kinds = ['pull'], n = 10) => queue.claim({ kinds, n, holder, leaseMs: LEASE, now });
    const keys = (claimed: Claimed[]) => claimed.map((c) => c.job.key);

    it('enqueueing a live key answers its job (hurried when asked sooner or more urgently); the key is free again once the job finished', () =>
      withQueue(async (queue) => {
        const first = await queue.enqueue({ kind: 'pull', key: 'conn-1', priority: 10, runAt: 5_000, payload: { connection: 'conn-1' } }, 1_000);
        expect(first.created).toBe(true);
        expect(first.job).toMatchObject({ state: 'available', attempts: 0, generation: 0, payload: { connection: 'conn-1' } });
        const again = await queue.enqueue({ kind: 'pull', key: 'conn-1', priority: 10, runAt: 9_000 }, 1_001);
        expect(again).toMatchObject({ created: false, job: { id: first.job.id, runAt: 5_000, priority: 10 } });
        // A manual pull: due now, more urgent. The waiting job takes both.
        const manual = await queue.enqueue({ kind: 'pull', key: 'conn-1', priority: 0 }, 2_000);
        expect(manual).toMatchObject({ created: false, job: { id: first.job.id, runAt: 2_000, priority: 0 } });
        // Another kind with the same key is another job.
        expect((await queue.enqueue({ kind: 'deletion', key: 'conn-1' }, 2_000)).created).toBe(true);
        const [running] = await claim(queue, 2_000);
        expect((await queue.enqueue({ kind: 'pull', key: 'conn-1' }, 2_001)).job.id).toBe(first.job.id);
        expect(await queue.findLive('pull', 'conn-1')).toMatchObject({ id: first.job.id, state: 'running' });
        await queue.complete(running!.lease, { now: 3_000 });
        expect(await queue.findLive('pull', 'conn-1')).toBeNull();
        const next = await queue.enqueue({ kind: 'pull', key: 'conn-1' }, 3_001);
        expect(next.created).toBe(true);
        expect(next.job.id).not.toBe(first.job.id);
      }));

    it('claims due jobs by priority, then due time, then enqueue order; a job not yet due waits', () =>
      withQueue(async (queue) => {
        await queue.enqueue({ kind: 'pull', key: 'scheduled-late', priority: 10, runAt: 300 }, 0);
        await queue.enqueue({ kind: 'pull', key: 'scheduled-early', priority: 10, runAt: 100 }, 0);
        await queue.enqueue({ kind: 'pull', key: 'scheduled-tie-1', priority: 10, runAt: 200 }, 0);
        await queue.enqueue({ kind: 'pull', key: 'scheduled-tie-2', priority: 10, runAt: 200 }, 0);
        await queue.enqueue({ kind: 'pull', key: 'future', priority: 0, runAt: 10_000 }, 0);
        await queue.enqueue({ kind: 'pull', key: 'manual', priority: 0, runAt: 350 }, 0);
        await queue.enqueue({ kind: 'other', key: 'other-kind', priority: -5, runAt: 0 }, 0);
        expect(keys(await claim(queue, 400, 'proc-a', ['pull'], 2))).toEqual(['manual', 'scheduled-early']);
        expect(keys(await claim(queue, 400))).toEqual(['scheduled-tie-1', 'scheduled-tie-2', 'scheduled-late']);
        expect(await claim(queue, 400)).toEqual([]);
        // Several kinds at once: one order over all of them.
        await queue.enqueue({ kind: 'pull', key: 'p', priority: 0, runAt: 0 }, 0);
        expect(keys(await claim(queue, 400, 'proc-a', ['pull', 'other'], 10))).toEqual(['other-kind', 'p']);
        expect(keys(await claim(queue, 10_000))).toEqual(['future']);
      }));

    it('claim races: many concurrent claims by two holders on two connections hand every job out exactly once', () =>
      withQueue(async (queue, another) => {
        const second = await another();
        try {
          for (let i = 0; i < 60; i++) await queue.enqueue({ kind: 'pull', key: `k${i}`, runAt: i }, 0);
          const rounds = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? queue : second).claim({ kinds: ['pull'], n: 3, holder: i % 2 === 0 ? 'proc-a' : 'proc-b', leaseMs: LEASE, now: 1_000 })));
          const ids = rounds.flat().map((c) => c.job.id);
          expect(new Set(ids).size).toBe(ids.length);
          expect(ids).toHaveLength(60);
          for (const c of rounds.flat()) expect(c.job).toMatchObject({ state: 'running', generation: 1, attempts: 1 });
        } finally {
          await second.close();
        }
      }));

    it('a holder whose lease was taken over can write nothing: heartbeat, complete, fail, park and cancel all throw LostLeaseError', () =>
      withQueue(async (queue) => {
        const { job } = await queue.enqueue({ kind: 'pull', key: 'k' }, 0);
        const [old] = await claim(queue, 0, 'proc-a');
        expect(old!.lease).toMatchObject({ jobId: job.id, holder: 'proc-a', generation: 1, expiresAt: LEASE });
        const [successor] = await claim(queue, LEASE + 1, 'proc-b');
        expect(successor!.lease).toMatchObject({ jobId: job.id, holder: 'proc-b', generation: 3 });
        const now = LEASE + 2;
        const stale = [
          () => queue.heartbeat(old!.lease, { leaseMs: LEASE, progress: { step: 'stale' }, now }),
          () => queue.complete(old!.lease, { now }),
          () => queue.fail(old!.lease, { error: 'stale', retryAt: now, now }),
          () => queue.park(old!.lease, { error: 'stale', now }),
          () => queue.cancel(old!.lease, { reason: 'stale', now }),
          // Same holder name, old generation: still refused.
          () => queue.complete({ ...successor!.lease, generation: 1 }, { now }),
        ];
        for (const write of stale) await expect(write()).rejects.toBeInstanceOf(LostLeaseError);
        expect(await queue.get(job.id)).toMatchObject({ state: 'running', holder: 'proc-b', generation: 3, progress: null, lastError: expect.stringContaining('proc-a') });
        await queue.complete(successor!.lease, { now });
        expect(await queue.get(job.id)).toMatchObject({ state: 'completed', finishedAt: now });
        await expect(queue.complete(successor!.lease, { now })).rejects.toMatchObject({ code: 'JOB_LEASE_LOST', jobId: job.id });
      }));

    it('a running job whose lease expired is taken over at the next claim, one generation up, the lost attempt counted; a heartbeat keeps it', () =>
      withQueue(async (queue) => {
        const { job } = await queue.enqueue({ kind: 'pull', key: 'k', maxAttempts: 3 }, 0);
        const [a] = await claim(queue, 0, 'proc-a');
        const renewed = await queue.heartbeat(a!.lease, { leaseMs: LEASE, progress: { cursor: 'page-2' }, now: 8_000 });
        expect(renewed.expiresAt).toBe(18_000);
        // A shorter heartbeat never shortens the lease.
        expect((await queue.heartbeat(renewed, { leaseMs: 1, now: 9_000 })).expiresAt).toBe(18_000);
        expect(await claim(queue, 15_000, 'proc-b')).toEqual([]);
        const [b] = await claim(queue, 18_000, 'proc-b');
        expect(b!.job).toMatchObject({ id: job.id, holder: 'proc-b', attempts: 2, generation: 3, progress: { cursor: 'page-2' } });
        await queue.complete(b!.lease, { now: 18_001 });
      }));

    it('a failed attempt is due again at its retry time (or after the back-off); with its attempts spent it is dead-lettered, error and progress kept', () =>
      withQueue(async (queue, _another, backoffUsed) => {
        const { job } = await queue.enqueue({ kind: 'etl', key: 'upload-1', maxAttempts: 3, payload: { upload: 'sha-1' } }, 0);
        const [first] = await claim(queue, 0, 'proc-a', ['etl']);
        expect(await queue.fail(first!.lease, { error: 'parser exploded', retryAt: 5_000, progress: { line: 10 }, now: 100 })).toBe('available');
        expect(await queue.get(job.id)).toMatchObject({ state: 'available', runAt: 5_000, attempts: 1, lastError: 'parser exploded', leaseExpiresAt: null });
        expect(await claim(queue, 4_999, 'proc-a', ['etl'])).toEqual([]);
        const [second] = await claim(queue, 5_000, 'proc-a', ['etl']);
        // No time named: the queue's back-off for the second attempt (2 s here, 40 s by default).
        expect(await queue.fail(second!.lease, { error: 'again', retryAt: null, now: 6_000 })).toBe('available');
        const retry = 6_000 + backoffUsed(2);
        expect((await queue.get(job.id))!.runAt).toBe(retry);
        expect(await claim(queue, retry - 1, 'proc-a', ['etl'])).toEqual([]);
        const [third] = await claim(queue, retry, 'proc-a', ['etl']);
        expect(await queue.fail(third!.lease, { error: 'for the last time', retryAt: retry + 1_000, progress: { line: 12 }, now: retry + 500 })).toBe('dead');
        expect(await queue.get(job.id)).toMatchObject({ state: 'dead', attempts: 3, lastError: 'for the last time', progress: { line: 12 }, payload: { upload: 'sha-1' }, finishedAt: retry + 500 });
        expect(await claim(queue, retry + 100_000, 'proc-a', ['etl'])).toEqual([]);
        // A dead job frees its key: new work of the key is a new job.
        expect((await queue.enqueue({ kind: 'etl', key: 'upload-1' }, retry + 1_000)).created).toBe(true);
      }));

    it('a job whose holder dies on its last attempt is dead-lettered by the take-over', () =>
      withQueue(async (queue) => {
        const { job } = await queue.enqueue({ kind: 'delivery', key: 'd1', maxAttempts: 1 }, 0);
        await claim(queue, 0, 'proc-a', ['delivery']);
        expect(await claim(queue, LEASE, 'proc-b', ['delivery'])).toEqual([]);
        expect(await queue.get(job.id)).toMatchObject({ state: 'dead', attempts: 1, finishedAt: LEASE, lastError: expect.stringContaining('expired') });
        expect((await queue.deadLetters({ kind: 'delivery' })).map((j) => j.id)).toEqual([job.id]);
      }));

    it('a claim takes back expired jobs of the kinds it claims only: a claimer of other kinds (or with a clock ahead) never takes a job from its holder (issue 26)', () =>
      withQueue(async (queue) => {
        const { job: etl } = await queue.enqueue({ kind: 'etl', key: 'upload-1' }, 0);
        const { job: pull } = await queue.enqueue({ kind: 'sync.run', key: 'run-1', lock: 'connection:c1' }, 0);
        const [e] = await claim(queue, 0, 'proc-a', ['etl']);
        const [p] = await claim(queue, 0, 'proc-a', ['sync.run']);
        // A sync claimer whose clock is days ahead: the ETL job stays with its holder.
        const later = 3 * 24 * 3600_000;
        const taken = await claim(queue, later, 'proc-b', ['sync.run']);
        expect(taken.map((c) => c.job.id)).toEqual([pull.id]);
        expect(await queue.get(etl.id)).toMatchObject({ state: 'running', holder: 'proc-a', generation: e!.lease.generation });
        await queue.heartbeat(e!.lease, { leaseMs: LEASE, now: 1_000 });
        await queue.complete(e!.lease, { now: 2_000 });
        await expect(queue.complete(p!.lease, { now: 2_000 })).rejects.toBeInstanceOf(LostLeaseError);
        // An ETL claimer leaves an expired pull alone, and its lock stays held until a pull claimer takes it back.
        await queue.enqueue({ kind: 'sync.run', key: 'run-2', lock: 'connection:c1' }, later);
        expect(await claim(queue, 2 * later, 'proc-c', ['etl'])).toEqual([]);
        expect(await queue.get(pull.id)).toMatchObject({ state: 'running', holder: 'proc-b' });
        const next = await claim(queue, 2 * later, 'proc-c', ['sync.run']);
        expect(next.map((c) => c.job.key)).toEqual(['run-1']);
      }));

    it('reschedule: a recurring job waits for its next due time, attempts reset, key live, lock free; a stale holder cannot reschedule', () =>
      withQueue(async (queue) => {
        const { job } = await queue.enqueue({ kind: 'sync.schedule', key: 'conn-1', lock: 'schedule:conn-1', maxAttempts: 2, runAt: 100 }, 0);
        const [a] = await claim(queue, 100, 'proc-a', ['sync.schedule']);
        await queue.reschedule(a!.lease, { runAt: 5_000, progress: { slot: 1 }, now: 200 });
        expect(await queue.get(job.id)).toMatchObject({ state: 'available', runAt: 5_000, attempts: 0, lastError: null, leaseExpiresAt: null, progress: { slot: 1 } });
        await expect(queue.reschedule(a!.lease, { runAt: 9_000, now: 201 })).rejects.toBeInstanceOf(LostLeaseError);
        // The key stays live: enqueueing it again answers the waiting job.
        expect(await queue.enqueue({ kind: 'sync.schedule', key: 'conn-1', runAt: 6_000 }, 300)).toMatchObject({ created: false, job: { id: job.id, runAt: 5_000 } });
        // The lock is free meanwhile.
        await queue.enqueue({ kind: 'other', key: 'x', lock: 'schedule:conn-1' }, 300);
        const [o] = await claim(queue, 300, 'proc-a', ['other']);
        expect(o!.job.key).toBe('x');
        await queue.complete(o!.lease, { now: 400 });
        expect(await claim(queue, 4_999, 'proc-b', ['sync.schedule'])).toEqual([]);
        // Many runs never spend its attempts.
        for (let i = 0; i < 4; i++) {
          const [b] = await claim(queue, 5_000 + i * 1_000, 'proc-b', ['sync.schedule']);
          expect(b!.job).toMatchObject({ id: job.id, attempts: 1 });
          await queue.reschedule(b!.lease, { runAt: 6_000 + i * 1_000, now: 5_001 + i * 1_000 });
        }
      }));

    it('park dead-letters at once, keeping the failing position; dead letters list by kind, newest first, in pages', () =>
      withQueue(async (queue) => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          const kind = i % 2 === 0 ? 'reactor.subscriptions' : 'etl';
          const { job } = await queue.enqueue({ kind, key: `e${i}`, payload: { position: 100 + i } }, 0);
          const [c] = await claim(queue, 0, 'proc-a', [kind], 1);
          await queue.park(c!.lease, { error: `poison ${i}`, progress: { position: 100 + i }, now: 1_000 + i });
          ids.push(job.id);
        }
        expect(await queue.get(ids[0]!)).toMatchObject({ state: 'dead', attempts: 1, lastError: 'poison #', progress: { position: 100 }, payload: { position: 100 } });
        expect((await queue.deadLetters()).map((j) => j.id)).toEqual([...ids].reverse());
        expect((await queue.deadLetters({ kind: 'reactor.subscriptions' })).map((j) => j.id)).toEqual([ids[4], ids[2], ids[0]]);
        const page1 = await queue.deadLetters({ limit: 2 });
        const last = page1[page1.length - 1]!;
        const page2 = await queue.deadLetters({ limit: 2, after: { finishedAt: last.finishedAt!, id: last.id } });
        expect([...page1, ...page2].map((j) => j.id)).toEqual([ids[4], ids[3], ids[2], ids[1]]);
        expect(await queue.purgeDead({ ids: [ids[1]!] })).toBe(1);
        expect(await queue.purgeDead({ kind: 'reactor.subscriptions', limit: 2 })).toBe(2);
        expect((await queue.deadLetters()).map((j) => j.id)).toEqual([ids[4], ids[3]]);
      }));

    it('replay puts a dead job back to available, due now, attempts reset and progress kept; refused while a live job holds its key', () =>
      withQueue(async (queue) => {
        const { job } = await queue.enqueue({ kind: 'etl', key: 'upload-1', maxAttempts: 1 }, 0);
        const [c] = await claim(queue, 0, 'proc-a', ['etl']);
        await queue.fail(c!.lease, { error: 'bug', retryAt: 1, progress: { line: 7 }, now: 10 });
        expect(await queue.replay('no-such-job', 20)).toEqual({ outcome: 'not_dead' });
        const live = await queue.enqueue({ kind: 'etl', key: 'upload-1' }, 20);
        expect(await queue.replay(job.id, 30)).toEqual({ outcome: 'key_taken', live: live.job });
        await queue.cancelJob(live.job.id, { reason: 'superseded', now: 40 });
        const replayed = await queue.replay(job.id, 50);
        expect(replayed).toMatchObject({ outcome: 'replayed', job: { id: job.id, state: 'available', attempts: 0, runAt: 50, progress: { line: 7 }, finishedAt: null } });
        expect(await queue.replay(job.id, 50)).toEqual({ outcome: 'not_dead' });
        const [again] = await claim(queue, 50, 'proc-b', ['etl']);
        expect(again!.job).toMatchObject({ id: job.id, attempts: 1, progress: { line: 7 } });
        await queue.complete(again!.lease, { now: 60 });
        expect(await queue.deadLetters()).toEqual([]);
      }));

    it('per-key exclusivity: a second job of a lock is not claimed while the first runs (across kinds), and is claimed once the first finishes or its lease expires', () =>
      withQueue(async (queue) => {
        await queue.enqueue({ kind: 'deletion.user', key: 'del-1', lock: 'user:u1' }, 0);
        await queue.enqueue({ kind: 'deletion.provider', key: 'erase-1', lock: 'user:u1' }, 1);
        await queue.enqueue({ kind: 'deletion.provider', key: 'erase-2', lock: 'user:u1' }, 2);
        await queue.enqueue({ kind: 'deletion.provider', key: 'other-user', lock: 'user:u2' }, 3);
        const kinds = ['deletion.user', 'deletion.provider'];
        const first = await claim(queue, 10, 'proc-a', kinds, 10);
        expect(keys(first)).toEqual(['del-1', 'other-user']);
        expect(await claim(queue, 20, 'proc-b', kinds, 10)).toEqual([]);
        await queue.complete(first[0]!.lease, { now: 30 });
        await queue.complete(first[1]!.lease, { now: 30 });
        const second = await claim(queue, 40, 'proc-b', kinds, 10);
        expect(keys(second)).toEqual(['erase-1']);
        // Its holder dies: once the lease expires the lock is free. A claim of the other kind
        // alone hands the expired job back (attempt counted) and takes the next job of the lock.
        expect(await claim(queue, 40 + LEASE - 1, 'proc-c', ['deletion.provider'], 10)).toEqual([]);
        const third = await claim(queue, 40 + LEASE, 'proc-c', ['deletion.provider'], 1);
        expect(keys(third)).toEqual(['erase-1']);
        expect(third[0]!.job.attempts).toBe(2);
        await queue.cancel(third[0]!.lease, { reason: 'user gone', now: 40 + LEASE + 1 });
        expect(keys(await claim(queue, 40 + LEASE + 2, 'proc-c', kinds, 10))).toEqual(['erase-2']);
      }));

    it('concurrent claims on two connections never run two jobs of one lock at once', () =>
      withQueue(async (queue, another) => {
        const second = await another();
        try {
          for (let i = 0; i < 24; i++) await queue.enqueue({ kind: 'pull', key: `run-${i}`, lock: `connection:${i % 4}` }, 0);
          const rounds = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? second : queue).claim({ kinds: ['pull'], n: 4, holder: `proc-${i % 2}`, leaseMs: LEASE, now: 10 })));
          const locks = rounds.flat().map((c) => c.job.lock);
          expect(locks.sort()).toEqual(['connection:0', 'connection:1', 'connection:2', 'connection:3']);
        } finally {
          await second.close();
        }
      }));

    it('cancel: a cancelled waiting job is never claimed; cancelling a running job fences its holder off', () =>
      withQueue(async (queue) => {
        const waiting = await queue.enqueue({ kind: 'pull', key: 'a' }, 0);
        expect(await queue.cancelJob(waiting.job.id, { reason: 'connection deleted', now: 1 })).toBe(true);
        expect(await queue.cancelJob(waiting.job.id, { reason: 'twice', now: 2 })).toBe(false);
        expect(await queue.get(waiting.job.id)).toMatchObject({ state: 'cancelled', lastError: 'connection deleted', finishedAt: 1 });
        expect(await claim(queue, 10)).toEqual([]);
        const running = await queue.enqueue({ kind: 'pull', key: 'b' }, 10);
        const [c] = await claim(queue, 10);
        expect(await queue.cancelJob(running.job.id, { reason: 'operator', now: 11 })).toBe(true);
        await expect(queue.heartbeat(c!.lease, { leaseMs: LEASE, now: 12 })).rejects.toBeInstanceOf(LostLeaseError);
        await expect(queue.complete(c!.lease, { now: 12 })).rejects.toBeInstanceOf(LostLeaseError);
        expect((await queue.get(running.job.id))!.state).toBe('cancelled');
      }));

    it('retention: completed and cancelled jobs are purged after the retention period in bounded batches; dead and live jobs stay', () =>
      withQueue(async (queue) => {
        for (let i = 0; i < 3; i++) await queue.enqueue({ kind: 'pull', key: `done-${i}` }, 0);
        for (const c of await claim(queue, 0)) await queue.complete(c.lease, { now: 100 });
        const cancelled = await queue.enqueue({ kind: 'pull', key: 'cancelled' }, 0);
        await queue.cancelJob(cancelled.job.id, { reason: 'no', now: 200 });
        const dead = await queue.enqueue({ kind: 'etl', key: 'dead' }, 0);
        const [d] = await claim(queue, 0, 'proc-a', ['etl']);
        await queue.park(d!.lease, { error: 'poison', now: 100 });
        const waiting = await queue.enqueue({ kind: 'pull', key: 'waiting', runAt: 10 ** 9 }, 0);
        expect(await queue.purgeExpired({ now: 100 + RETENTION - 1 })).toBe(0);
        expect(await queue.purgeExpired({ now: 200 + RETENTION, limit: 2 })).toBe(2);
        expect(await queue.purgeExpired({ now: 200 + RETENTION, limit: 2 })).toBe(2);
        expect(await queue.purgeExpired({ now: 200 + RETENTION })).toBe(0);
        expect(await queue.get(cancelled.job.id)).toBeNull();
        expect((await queue.get(dead.job.id))!.state).toBe('dead');
        expect((await queue.get(waiting.job.id))!.state).toBe('available');
        expect(await queue.counts()).toEqual([
          { kind: 'etl', state: 'dead', count: 1 },
          { kind: 'pull', state: 'available', count: 1 },
        ]);
      }));

    it('contracts §18: claims take turns between tenants: beside 100 due jobs of tenant A, the one job of tenant B is in the first claim, and claims of one alternate', () =>
      withQueue(async (queue) => {
        for (let i = 0; i < 100; i++) await queue.enqueue({ kind: 'etl', key: `a-${i}`, tenant: 'tenant-a', user: 'user-a' }, i);
        await queue.enqueue({ kind: 'etl', key: 'b-0', tenant: 'tenant-b', user: 'user-b' }, 1_000);
        await queue.enqueue({ kind: 'etl', key: 'b-1', tenant: 'tenant-b', user: 'user-b' }, 1_001);
        expect(keys(await claim(queue, 2_000, 'proc-a', ['etl'], 2))).toEqual(['a-0', 'b-0']);
        const ones = [];
        for (let i = 0; i < 4; i++) ones.push(...keys(await claim(queue, 2_000, 'proc-a', ['etl'], 1)));
        expect(ones).toEqual(['a-1', 'b-1', 'a-2', 'a-3']);
        expect((await queue.get((await queue.findLive('etl', 'b-0'))!.id))).toMatchObject({ tenant: 'tenant-b', user: 'user-b' });
      }));

    it("contracts §18: within a tenant, claims take turns between its users: one user's 50 due jobs do not hold another user's job back", () =>
      withQueue(async (queue) => {
        for (let i = 0; i < 50; i++) await queue.enqueue({ kind: 'etl', key: `u1-${i}`, tenant: 't', user: 'user-1' }, i);
        await queue.enqueue({ kind: 'etl', key: 'u2-0', tenant: 't', user: 'user-2' }, 100);
        expect(keys(await claim(queue, 200, 'proc-a', ['etl'], 2))).toEqual(['u1-0', 'u2-0']);
      }));

    it("contracts §18: within a tenant, the first user in turn with the tenant's most urgent due job goes first (a job not due or whose lock is held does not count), then the turns go on from that user", () =>
      withQueue(async (queue) => {
        await queue.enqueue({ kind: 'other', key: 'holder', lock: 'L' }, 0);
        const [holder] = await claim(queue, 10, 'proc-a', ['other'], 1);
        await queue.enqueue({ kind: 'etl', key: 'u1-0', tenant: 't', user: 'user-1', priority: 5 }, 0);
        await queue.enqueue({ kind: 'etl', key: 'u2-0', tenant: 't', user: 'user-2', lock: 'L' }, 0);
        await queue.enqueue({ kind: 'etl', key: 'u3-0', tenant: 't', user: 'user-3' }, 0);
        await queue.enqueue({ kind: 'etl', key: 'u3-1', tenant: 't', user: 'user-3' }, 1);
        await queue.enqueue({ kind: 'etl', key: 'u4-0', tenant: 't', user: 'user-4', priority: -1, runAt: 1_000 }, 0);
        const ones = [];
        for (let i = 0; i < 3; i++) ones.push(...keys(await claim(queue, 100, 'proc-a', ['etl'], 1)));
        expect(ones).toEqual(['u3-0', 'u3-1', 'u1-0']);
        await queue.complete(holder!.lease, { now: 110 });
        expect(keys(await claim(queue, 120, 'proc-a', ['etl'], 2))).toEqual(['u2-0']);
        expect(keys(await claim(queue, 1_000, 'proc-a', ['etl'], 2))).toEqual(['u4-0']);
      }));

    it('contracts §18: a tenant running its cap of jobs of a kind is passed over, even for more urgent work, while another tenant has a due job; alone, it may go over', () =>
      withQueue(async (queue) => {
        const capped = (n: number, now: number) => queue.claim({ kinds: ['etl'], n, holder: 'proc-a', leaseMs: LEASE, now, tenantCap: 2 });
        for (let i = 0; i < 5; i++) await queue.enqueue({ kind: 'etl', key: `a-${i}`, tenant: 'tenant-a', priority: -1 }, i);
        expect(keys(await capped(2, 10))).toEqual(['a-0', 'a-1']);
        await queue.enqueue({ kind: 'etl', key: 'b-0', tenant: 'tenant-b', priority: 5 }, 20);
        expect(keys(await capped(1, 30))).toEqual(['b-0']);
        // No other tenant waits: the slots are not left idle.
        expect(keys(await capped(2, 40))).toEqual(['a-2', 'a-3']);
        // Without a cap, priority still comes first across tenants.
        await queue.enqueue({ kind: 'etl', key: 'b-1', tenant: 'tenant-b', priority: 5 }, 50);
        expect(keys(await claim(queue, 60, 'proc-a', ['etl'], 1))).toEqual(['a-4']);
      }));

    it('refuses bad input before writing anything: oversized payload, unnamed kind, claims outside their bounds', () =>
      withQueue(async (queue) => {
        await expect(queue.enqueue({ kind: 'etl', payload: { blob: 'x'.repeat(MAX_PAYLOAD_BYTES) } }, 0)).rejects.toBeInstanceOf(RangeError);
        await expect(queue.enqueue({ kind: '' }, 0)).rejects.toBeInstanceOf(RangeError);
        await expect(queue.enqueue({ kind: 'etl', key: 'a\u0000b' }, 0)).rejects.toBeInstanceOf(RangeError);
        await expect(queue.enqueue({ kind: 'etl', maxAttempts: 0 }, 0)).rejects.toBeInstanceOf(RangeError);
        await expect(queue.claim({ kinds: [], n: 1, holder: 'h', leaseMs: 1, now: 0 })).rejects.toBeInstanceOf(RangeError);
        await expect(queue.claim({ kinds: ['etl'], n: 0, holder: 'h', leaseMs: 1, now: 0 })).rejects.toBeInstanceOf(RangeError);
        await expect(queue.claim({ kinds: ['etl'], n: 101, holder: 'h', leaseMs: 1, now: 0 })).rejects.toBeInstanceOf(RangeError);
        await expect(queue.claim({ kinds: ['etl'], n: 1, holder: 'h', leaseMs: 0, now: 0 })).rejects.toBeInstanceOf(RangeError);
        await expect(queue.claim({ kinds: ['etl'], n: 1, holder: 'h', leaseMs: 1, now: 0, tenantCap: 0 })).rejects.toBeInstanceOf(RangeError);
        await expect(queue.enqueue({ kind: 'etl', tenant: '' }, 0)).rejects.toBeInstanceOf(RangeError);
        await expect(queue.deadLetters({ limit: 1_001 })).rejects.toBeInstanceOf(RangeError);
        expect(await queue.counts()).toEqual([]);
      }));
  });
}
