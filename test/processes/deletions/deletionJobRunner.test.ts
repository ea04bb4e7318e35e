import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletionStream } from '../../../commands/deletions/deletionJob.js';
import { USER_DELETED } from '../../../src/catalog/eventTypes.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import { DELETION_JOB, deletionJobHandler } from '../../../src/processes/deletions/deletionJobRunner.js';
import { JobRunner } from '../../../src/processes/jobs/jobRunner.js';
import { gate, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';

/**
 * Spec "Deletion job" (pending → running → done | failed) and the issue: "a job that cannot
 * finish within a bound is failed with the reason, and one stuck job never blocks the others".
 * The service's own job runner is stopped; this one takes the same jobs from the work queue
 * (issue 26) with deadlines the test expires itself. A step of the user deletion that never returns stands for anything that hangs
 * (a provider's revocation, a store that stopped answering).
 */
let t: TestApp;
let tenant: TenantHandle;
let runner: JobRunner;
const stuck = new Set<string>();
/** Users whose job fails once when it appends `deletion.finished`, after every other step (issue 26). */
const failOnceAtEnd = new Set<string>();
const hang = gate();
/** The armed deadline of each attempt, in the order the attempts started. */
const deadlines: (() => void)[] = [];

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('runner');
  await t.ctx.jobs.stop();
  t.ctx.erasureHooks.push({
    name: 'hangs for some users',
    eraseUser: async ({ userId }) => {
      if (stuck.has(userId)) await hang.promise;
    },
  });
  runner = new JobRunner({ queue: t.ctx.jobs.queue, holder: 'test-runner', leaseMs: 10_000, pollMs: 20 });
  runner.register(
    deletionJobHandler({
      eventStore: failingFinish(t.ctx.eventStore),
      readStore: t.ctx.readStore,
      rawStore: t.ctx.rawStore,
      dataKeys: t.ctx.dataKeys,
      hooks: t.ctx.erasureHooks,
      settle: (position, timeoutMs) => t.ctx.projectors.waitForIdle(position, timeoutMs),
      timeoutMs: 60_000,
      retryPauseMs: 10,
      deadline: (_ms, expire) => {
        deadlines.push(expire);
        return () => {};
      },
    }),
  );
  runner.start();
});
afterAll(async () => {
  hang.open();
  await runner?.stop();
  await t?.close();
});

/** The event store, but the first `deletion.finished` (done) of a user in failOnceAtEnd throws. */
function failingFinish(inner: EventStore): EventStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'appendToStream') return Reflect.get(target, prop, receiver) as unknown;
      const append: EventStore['appendToStream'] = async (stream, events, options) => {
        const finish = events.find((e) => e.type === 'deletion.finished' && (e.data as { status: string }).status === 'done');
        const userId = finish && (finish.data as { user_id: string }).user_id;
        if (userId && failOnceAtEnd.delete(userId)) throw new Error('the store went away after the purge');
        return target.appendToStream(stream, events, options);
      };
      return append;
    },
  });
}

const status = async (jobId: string) => (await t.call('GET', `/v1/deletions/${jobId}`, { key: tenant.apiKey })).json() as { status: string; error?: string };

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('deletion jobs run side by side, each within its bound (Deletion job; issue: bounded, never blocking)', () => {
  it('lets a job requested after a stuck one end done while the stuck one still runs; fails the stuck one at its deadline with the step it was at; a new request then starts a new job', { timeout: 30_000 }, async () => {
    const a = (await t.createUser(tenant.apiKey)).id;
    const b = (await t.createUser(tenant.apiKey)).id;
    stuck.add(a);
    const stuckJob = await t.deleteUser(tenant.apiKey, a);
    await until('the stuck job reached its hanging step', async () => (await status(stuckJob)).status === 'running' && deadlines.length === 1);

    const otherJob = await t.deleteUser(tenant.apiKey, b);
    expect((await t.waitForDeletion(tenant.apiKey, otherJob)).status).toBe('done');
    expect((await status(stuckJob)).status).toBe('running');

    deadlines[0]!();
    const failed = await t.waitForDeletion(tenant.apiKey, stuckJob);
    expect(failed).toMatchObject({ status: 'failed', finished_at: expect.any(String) });
    expect(failed.error).toMatch(/did not finish within 60 s; it was dropping read-model rows/);
    // The user stays deleted for readers (reads 404, tokens dead); asking again starts a new job, which redoes every step.
    expect((await t.call('GET', `/v1/users/${a}`, { key: tenant.apiKey })).statusCode).toBe(404);
    stuck.delete(a);
    const retry = await t.deleteUser(tenant.apiKey, a);
    expect(retry).not.toBe(stuckJob);
    expect((await t.waitForDeletion(tenant.apiKey, retry)).status).toBe('done');
  });
});

describe('deletion jobs are resumable from any step (issue 26)', () => {
  it('a deletion that fails after the purge step completes on its retry and sends user.deleted, the user stream tombstoned last', { timeout: 30_000 }, async () => {
    const user = (await t.createUser(tenant.apiKey)).id;
    failOnceAtEnd.add(user);
    const jobId = await t.deleteUser(tenant.apiKey, user);
    expect((await t.waitForDeletion(tenant.apiKey, jobId)).status).toBe('done');
    expect(failOnceAtEnd.has(user)).toBe(false);
    const types = (await t.ctx.eventStore.readStream(deletionStream(jobId))).map((e) => e.type);
    expect(types.filter((type) => type === 'deletion.started')).toHaveLength(2);
    expect(types.filter((type) => type === USER_DELETED)).toHaveLength(1);
    expect(types.at(-1)).toBe('deletion.finished');
    // The queue's completion follows the handler's last event (the job runner writes it once the
    // handler returned), so the job leaves the queue a moment after the deletion reads `done`.
    await expect.poll(() => t.ctx.jobs.queue.findLive(DELETION_JOB, jobId), { timeout: 10_000 }).toBeNull();
  });
});
