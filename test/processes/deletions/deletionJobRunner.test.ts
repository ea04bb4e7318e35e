import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeletionJobRunner } from '../../../src/processes/deletions/deletionJobRunner.js';
import { gate, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';

/**
 * Spec "Deletion job" (pending → running → done | failed) and the issue: "a job that cannot
 * finish within a bound is failed with the reason, and one stuck job never blocks the others".
 * The service's own runner is stopped; this one runs the same jobs with deadlines the test
 * expires itself. A step of the user deletion that never returns stands for anything that hangs
 * (a provider's revocation, a store that stopped answering).
 */
let t: TestApp;
let tenant: TenantHandle;
let runner: DeletionJobRunner;
const stuck = new Set<string>();
const hang = gate();
/** The armed deadline of each attempt, in the order the attempts started. */
const deadlines: (() => void)[] = [];

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('runner');
  await t.ctx.deletions.stop();
  t.ctx.erasureHooks.push({
    name: 'hangs for some users',
    eraseUser: async ({ userId }) => {
      if (stuck.has(userId)) await hang.promise;
    },
  });
  runner = new DeletionJobRunner({
    eventStore: t.ctx.eventStore,
    readStore: t.ctx.readStore,
    rawStore: t.ctx.rawStore,
    dataKeys: t.ctx.dataKeys,
    hooks: t.ctx.erasureHooks,
    settle: (position, timeoutMs) => t.ctx.projectors.waitForIdle(position, timeoutMs),
    timeoutMs: 60_000,
    pollMs: 20,
    deadline: (_ms, expire) => {
      deadlines.push(expire);
      return () => {};
    },
  });
  runner.start();
});
afterAll(async () => {
  hang.open();
  await runner?.stop();
  await t?.close();
});

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
