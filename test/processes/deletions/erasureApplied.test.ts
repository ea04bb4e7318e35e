import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PROVIDER_DATA_ERASED, USER_ERASED } from '../../../src/catalog/eventTypes.js';
import { DELETION_JOB, deletionJobHandler } from '../../../src/processes/deletions/deletionJobRunner.js';
import { ErasureNotApplied, settleErasure } from '../../../src/processes/deletions/erasureApplied.js';
import { DEAD_LETTERS, type DeadLetterDoc } from '../../../src/projector/deadLetters.js';
import { JobRunner } from '../../../src/processes/jobs/jobRunner.js';
import { defineProjection } from '../../../src/projector/projection.js';
import { ProjectorRuntime } from '../../../src/projector/projectorRuntime.js';
import type { ReadStore } from '../../../src/readstore/readStore.js';
import { startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';

/**
 * Contracts §19: "A deletion job or a provider erasure is `done` only when every read model has
 * applied its erasure and nothing of it is in a dead letter." A read model whose code fails on
 * `user.erased` (while `broken`) runs beside the service's own; the job must wait, neither done nor
 * failed, until it applies, then end done.
 */
let t: TestApp;
let tenant: TenantHandle;
let runner: JobRunner;
let extra: ProjectorRuntime;
/** A read model on a store that answers SQLITE_BUSY to its batches while `busy`. */
let onBusyStore: ProjectorRuntime;
let busy = false;
/** The erasure events the extra read model's code fails on. */
const broken = new Set<string>([USER_ERASED, PROVIDER_DATA_ERASED]);

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('applied');
  await t.ctx.jobs.stop();
  const failing = defineProjection({
    name: 'fails_on_erasure',
    collections: [{ name: 'fails_on_erasure_rows' }],
    eventTypes: [USER_ERASED, PROVIDER_DATA_ERASED],
    evolve: (e) => {
      if (broken.has(e.type)) throw new TypeError('cannot drop the user');
      return [];
    },
  });
  extra = new ProjectorRuntime(t.ctx.eventStore, t.ctx.readStore, [failing], undefined, { retry: { delaysMs: [1, 1, 1, 1] }, stallBackoff: { firstMs: 1, maxMs: 20 } });
  await extra.start();
  const busyStore = new Proxy(t.ctx.readStore, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'applyBatch') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      const applyBatch: ReadStore['applyBatch'] = async (batch) => {
        if (busy && batch.projection === 'on_busy_store') throw Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
        return target.applyBatch(batch);
      };
      return applyBatch;
    },
  });
  const onBusy = defineProjection({ name: 'on_busy_store', collections: [{ name: 'on_busy_store_rows' }], eventTypes: [USER_ERASED], evolve: () => [] });
  onBusyStore = new ProjectorRuntime(t.ctx.eventStore, busyStore, [onBusy], undefined, { stallBackoff: { firstMs: 1, maxMs: 20 } });
  await onBusyStore.start();
  runner = new JobRunner({ queue: t.ctx.jobs.queue, holder: 'test-runner', leaseMs: 10_000, pollMs: 20 });
  runner.register(
    deletionJobHandler({
      eventStore: t.ctx.eventStore,
      readStore: t.ctx.readStore,
      rawStore: t.ctx.rawStore,
      dataKeys: t.ctx.dataKeys,
      hooks: t.ctx.erasureHooks,
      settle: async (position, timeoutMs) => {
        await t.ctx.projectors.waitForIdle(position, timeoutMs);
        await extra.waitForIdle(position, timeoutMs);
        await onBusyStore.waitForIdle(position, timeoutMs);
      },
      timeoutMs: 60_000,
      retryPauseMs: 10,
      waitPauseMs: 10,
    }),
  );
  runner.start();
});
afterAll(async () => {
  await runner?.stop();
  await extra?.stop();
  await onBusyStore?.stop();
  await t?.close();
});

const status = async (jobId: string) => (await t.call('GET', `/v1/deletions/${jobId}`, { key: tenant.apiKey })).json() as { status: string };

describe('a deletion is done only when it is true (contracts §19)', () => {
  it('contracts §19: a user.erased that a read model fails to apply keeps the deletion job from done (it waits, saying why, attempts unspent) until the read model applies it; then the job is done', { timeout: 60_000 }, async () => {
    const user = (await t.createUser(tenant.apiKey)).id;
    const jobId = await t.deleteUser(tenant.apiKey, user);

    // The job has looked at least three times and found the read model stopped on its erasure.
    await vi.waitFor(
      async () => {
        const job = await t.ctx.jobs.queue.findLive(DELETION_JOB, jobId);
        const progress = job?.progress as { waiting?: string; waits?: number } | null;
        expect(progress?.waits ?? 0).toBeGreaterThanOrEqual(3);
        expect(progress?.waiting).toMatch(/fails_on_erasure stopped on user\.erased@\d+ .*TypeError: cannot drop the user/);
        expect(job?.attempts).toBeLessThanOrEqual(1);
      },
      { timeout: 30_000, interval: 20 },
    );
    expect((await status(jobId)).status).toBe('running');
    const [stall] = (await extra.status()).map((s) => s.stall);
    expect(stall).toMatchObject({ state: 'stopped', event_type: USER_ERASED });

    broken.delete(USER_ERASED);
    expect((await t.waitForDeletion(tenant.apiKey, jobId)).status).toBe('done');
    expect((await extra.status())[0]!.stall).toBeNull();
  });

  it('contracts §19: a provider erasure whose provider_data.erased a read model fails to apply is not done until the read model applies it; then it is done', { timeout: 60_000 }, async () => {
    const user = (await t.createUser(tenant.apiKey)).id;
    const res = await t.call('DELETE', `/v1/users/${user}/data/device-a`, { key: tenant.apiKey });
    expect(res.statusCode).toBe(202);
    const jobId = (res.json() as { job_id: string }).job_id;
    await vi.waitFor(
      async () => {
        const progress = (await t.ctx.jobs.queue.findLive(DELETION_JOB, jobId))?.progress as { waiting?: string; waits?: number } | null;
        expect(progress?.waits ?? 0).toBeGreaterThanOrEqual(3);
        expect(progress?.waiting).toMatch(/fails_on_erasure stopped on provider_data\.erased@\d+/);
      },
      { timeout: 30_000, interval: 20 },
    );
    expect((await status(jobId)).status).toBe('running');
    broken.delete(PROVIDER_DATA_ERASED);
    expect((await t.waitForDeletion(tenant.apiKey, jobId)).status).toBe('done');
  });

  it('contracts §19: a deletion whose user.erased waits on a read model whose store is busy is neither failed nor done while it waits, and is done once the store answers', { timeout: 60_000 }, async () => {
    busy = true;
    const user = (await t.createUser(tenant.apiKey)).id;
    const jobId = await t.deleteUser(tenant.apiKey, user);
    await vi.waitFor(
      async () => {
        const progress = (await t.ctx.jobs.queue.findLive(DELETION_JOB, jobId))?.progress as { waiting?: string; waits?: number } | null;
        expect(progress?.waits ?? 0).toBeGreaterThanOrEqual(2);
        expect(progress?.waiting).toMatch(/on_busy_store waiting on its store \(busy\) since .*SqliteError: database is locked/);
      },
      { timeout: 30_000, interval: 20 },
    );
    expect((await status(jobId)).status).toBe('running');
    busy = false;
    expect((await t.waitForDeletion(tenant.apiKey, jobId)).status).toBe('done');
  });
});

describe('a dead letter of an erasure event keeps its job from done (contracts §19)', () => {
  it('contracts §19: an open dead letter of an event on the job stream (left by an earlier version) makes the wait for the read models answer not-applied, with the dead letter to replay; a closed one does not', async () => {
    const jobId = `job-${Date.now()}`;
    const letter: DeadLetterDoc = {
      _id: `records@1`, projection: 'records', position: 1, event_id: 'e1', event_type: USER_ERASED, stream: `deletion-${jobId}`,
      error: 'TypeError: x', attempts: 5, status: 'open', dead_lettered_at: new Date().toISOString(), resolved_at: null,
    };
    await t.ctx.readStore.applyChanges([{ op: 'put', collection: DEAD_LETTERS, doc: letter }]);
    const wait = () => settleErasure({ eventStore: t.ctx.eventStore, readStore: t.ctx.readStore, jobId, position: 0, settle: async () => {}, deadline: Date.now() + 10_000 });
    const err = await wait().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ErasureNotApplied);
    expect((err as Error).message).toContain('dead letters records@1 are open');
    await t.ctx.readStore.applyChanges([{ op: 'put', collection: DEAD_LETTERS, doc: { ...letter, status: 'replayed', resolved_at: new Date().toISOString() } }]);
    await expect(wait()).resolves.toBeUndefined();
    await t.ctx.readStore.applyChanges([{ op: 'delete', collection: DEAD_LETTERS, id: letter._id }]);
  });
});

