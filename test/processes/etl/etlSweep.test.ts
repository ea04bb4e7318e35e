import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_UPLOAD_BYTES } from '../../../src/processes/etl/etlTask.js';
import { ETL_BULK_JOB, ETL_JOB } from '../../../src/processes/etl/etlWorker.js';
import { sweepEtlJobs } from '../../../src/processes/etl/etlSweep.js';
import { createJob } from '../../server/records/pipelineFixtures.js';
import { startTestApp, type TestApp } from '../../support/server.js';

/**
 * Issue 26: the job feeder enqueues every upload's ETL job; the sweep is its backstop. An upload
 * pending and due for half a minute without a live queue job gets one, once; a job already
 * queued, a recent upload and a finished one are left alone.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  // Jobs are made by hand; nothing runs them.
  await t.ctx.jobs.stop();
  await t.ctx.reactors.stop();
});
afterAll(async () => {
  await t?.close();
});

describe('ETL sweep (issue 26)', () => {
  it('enqueues the job of a due pending upload that has none, once; leaves queued, recent and finished uploads alone', async () => {
    const tenant = await t.createTenant('etl-sweep');
    const who = { userId: (await t.createUser(tenant.apiKey)).id, tenantId: tenant.id };
    const orphan = await createJob(t, who, 'device-a', 'pending', '2026-11-03T10:00:00.000Z');
    const queued = await createJob(t, who, 'device-a', 'pending', '2026-11-03T10:00:00.000Z');
    const recent = await createJob(t, who, 'device-a', 'pending', new Date().toISOString());
    await createJob(t, who, 'device-a', 'done', '2026-11-03T10:00:00.000Z');
    await t.ctx.projectors.waitForIdle();
    const existing = await t.ctx.jobs.queue.enqueue({ kind: ETL_JOB, key: queued, payload: { stream: queued } });

    expect(await sweepEtlJobs(t.ctx.readStore, t.ctx.eventStore, t.ctx.jobs.queue)).toBe(1);
    expect((await t.ctx.jobs.queue.findLive(ETL_JOB, orphan))?.payload).toEqual({ stream: orphan });
    expect((await t.ctx.jobs.queue.findLive(ETL_JOB, queued))?.id).toBe(existing.job.id);
    expect(await t.ctx.jobs.queue.findLive(ETL_JOB, recent)).toBeNull();
    expect(await sweepEtlJobs(t.ctx.readStore, t.ctx.eventStore, t.ctx.jobs.queue)).toBe(0);
  });

  it('contracts §18: the job the sweep makes for a bulk upload is claimed in the bulk lane (`etl.bulk`, its user locked), never beside small jobs', async () => {
    const tenant = await t.createTenant('etl-sweep-bulk');
    const who = { userId: (await t.createUser(tenant.apiKey)).id, tenantId: tenant.id };
    const big = await createJob(t, who, 'device-a', 'pending', '2026-11-03T10:00:00.000Z', BULK_UPLOAD_BYTES);
    await t.ctx.projectors.waitForIdle();

    expect(await sweepEtlJobs(t.ctx.readStore, t.ctx.eventStore, t.ctx.jobs.queue)).toBe(1);
    expect(await t.ctx.jobs.queue.findLive(ETL_JOB, big)).toBeNull();
    const smallLane = await t.ctx.jobs.queue.claim({ kinds: [ETL_JOB], n: 10, holder: 'small-lane', leaseMs: 10_000 });
    expect(smallLane.map((c) => c.job.key)).not.toContain(big);
    const [claimed] = await t.ctx.jobs.queue.claim({ kinds: [ETL_BULK_JOB], n: 10, holder: 'bulk-lane', leaseMs: 10_000 });
    expect(claimed?.job).toMatchObject({ kind: ETL_BULK_JOB, key: big, lock: `etl-bulk:${who.userId}` });
  });
});
