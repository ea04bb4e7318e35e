import { afterEach, describe, expect, it } from 'vitest';
import { uploadStream } from '../../../commands/ingestion/upload.js';
import { EtlThreadPool } from '../../../src/processes/etl/etlPool.js';
import { BULK_UPLOAD_BYTES } from '../../../src/processes/etl/etlTask.js';
import { etlJobHandlers } from '../../../src/processes/etl/etlWorker.js';
import { JobRunner } from '../../../src/processes/jobs/jobRunner.js';
import { fixtureB, postUpload, requestFor } from '../../ingest/uploadHelpers.js';
import { expectStatus, startTestApp, type TestApp } from '../../support/server.js';
import { EAT_MEMORY, SPIN_FOREVER } from './hostileParsers.js';

/**
 * contracts §18: processing a stranger's file runs where it can be stopped. Each attempt has a
 * wall-clock deadline and a memory cap, enforced by ending its worker thread; crossing either
 * fails that upload (`failed`, its `error` naming `deadline` or `memory`) and no other. The ETL
 * threads load test parsers (hostileParsers.ts) in which a marked device-b payload never ends or
 * allocates without bound. Small deadlines and caps keep the test short; every wait is for a
 * condition (a hung ETL fails the test by its timeout).
 */
let t: TestApp | null = null;
let runner: JobRunner | null = null;
let pool: EtlThreadPool | null = null;

afterEach(async () => {
  await runner?.stop();
  await pool?.close();
  await t?.close();
  runner = pool = t = null;
});

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The service with one shared ETL thread, whose jobs run on threads that load the test parsers. */
async function start(env: Record<string, string>): Promise<TestApp> {
  const app = await startTestApp({ ETL_CONCURRENCY: '1', ETL_BULK_CONCURRENCY: '1', ...env });
  t = app;
  // The service's own runner stays off; this runner's pool loads the test parsers.
  await app.ctx.jobs.stop();
  pool = new EtlThreadPool(app.ctx.config, { parsersModule: new URL('./hostileParsers.ts', import.meta.url) });
  // A lease far above the test's run: at load 15-20 a 10 s lease ran out before its renewal and the
  // small job was claimed twice, which is not what these tests are about (one attempt per job).
  runner = new JobRunner({ queue: app.ctx.jobs.queue, holder: 'limits-test', leaseMs: 60_000, pollMs: 20 });
  const etl = etlJobHandlers({ eventStore: app.ctx.eventStore, rawStore: app.ctx.rawStore, parsers: {}, dataKeys: app.ctx.dataKeys, pool, threads: 1, bulkThreads: 1 });
  for (const h of etl.handlers) runner.register(h);
  return app;
}

type Sent = { stream: string; user: string; uploadId: string; apiKey: string };

async function send(app: TestApp, uploadId: string, body: Buffer): Promise<Sent> {
  const tenant = await app.createTenant(`limits-${uploadId}`);
  const user = await app.createUser(tenant.apiKey);
  const { token } = await app.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  expectStatus(await postUpload(app, 'device-b', token, uploadId, requestFor('device-b', body)), 202);
  return { stream: uploadStream(user.id, 'device-b', uploadId), user: user.id, uploadId, apiKey: tenant.apiKey };
}

const finished = async (app: TestApp, s: Sent) => (await app.ctx.eventStore.readStream(s.stream)).some((e) => e.type === 'upload.finished');
const typesOf = async (app: TestApp, s: Sent) => (await app.ctx.eventStore.readStream(s.stream)).map((e) => e.type);

async function uploadResource(app: TestApp, s: Sent): Promise<{ status: string; error: string | null }> {
  await app.ctx.projectors.waitForIdle();
  const res = await app.call('GET', `/v1/users/${s.user}/uploads/device-b/${s.uploadId}`, { key: s.apiKey });
  expectStatus(res, 200);
  return res.json() as { status: string; error: string | null };
}

/** Both uploads were on the queue before the runner started: they are claimed together, onto the one shared thread. */
async function runBoth(app: TestApp, hostile: Sent, small: Sent): Promise<void> {
  runner!.start();
  await until(async () => (await finished(app, hostile)) && (await finished(app, small)));
}

/** The small upload of another tenant, beside the hostile one: done, in the one attempt it was claimed for. */
async function expectUntouched(app: TestApp, small: Sent): Promise<void> {
  expect(await uploadResource(app, small)).toMatchObject({ status: 'done', error: null });
  const types = await typesOf(app, small);
  expect(types.filter((type) => type === 'etl.job_started')).toHaveLength(1);
  expect(types).not.toContain('etl.job_failed');
}

describe('ETL attempts that can be stopped (contracts §18)', () => {
  it('contracts §18: a decoder that never ends fails its upload naming `deadline` once the deadline passes, while a small upload of another tenant on the same thread is done', async () => {
    const app = await start({ ETL_DEADLINE_S: '4' });
    const hostile = await send(app, 'never-ends', Buffer.concat([SPIN_FOREVER, fixtureB()]));
    const small = await send(app, 'small-beside', fixtureB());
    await runBoth(app, hostile, small);

    const failed = await uploadResource(app, hostile);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe('deadline: processing this upload took longer than 4 s');
    // Failed at once: one attempt, not retried, not parked.
    const types = await typesOf(app, hostile);
    expect(types.filter((type) => type === 'etl.job_started')).toHaveLength(1);
    expect(types).not.toContain('etl.job_failed');
    expect(types).not.toContain('etl.job_parked');
    await expectUntouched(app, small);
  });

  it('contracts §18: a decoder that allocates beyond ETL_MEMORY_MB fails its upload naming `memory`, while a small upload of another tenant that shared its thread is done', async () => {
    const app = await start({ ETL_MEMORY_MB: '128' });
    const hostile = await send(app, 'eats-memory', Buffer.concat([EAT_MEMORY, fixtureB()]));
    const small = await send(app, 'small-beside', fixtureB());
    await runBoth(app, hostile, small);

    expect(await uploadResource(app, hostile)).toEqual(expect.objectContaining({ status: 'failed', error: 'memory: processing this upload needed more than 128 MiB' }));
    expect(await typesOf(app, hostile)).not.toContain('etl.job_failed');
    await expectUntouched(app, small);
  });

  it('contracts §18: a bulk import that allocates beyond the cap, on its own thread, fails naming `memory`; a small upload running meanwhile is done', async () => {
    const app = await start({ ETL_MEMORY_MB: '128' });
    const hostile = await send(app, 'big-eats-memory', Buffer.concat([EAT_MEMORY, fixtureB(), Buffer.alloc(BULK_UPLOAD_BYTES, ' ')]));
    const small = await send(app, 'small-beside', fixtureB());
    await runBoth(app, hostile, small);

    expect(await uploadResource(app, hostile)).toEqual(expect.objectContaining({ status: 'failed', error: 'memory: processing this upload needed more than 128 MiB' }));
    await expectUntouched(app, small);
  });
});
