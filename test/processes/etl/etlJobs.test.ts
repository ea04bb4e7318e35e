import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { uploadStream } from '../../../commands/ingestion/upload.js';
import type { EtlRunner } from '../../../src/processes/etl/etlPool.js';
import type { EtlRunOutcome, EtlTask } from '../../../src/processes/etl/etlTask.js';
import { ETL_JOB, etlJobHandler } from '../../../src/processes/etl/etlWorker.js';
import { JobRunner } from '../../../src/processes/jobs/jobRunner.js';
import { StoreFailureError } from '../../../src/shared/transientErrors.js';
import { fixtureB, postUpload, requestFor } from '../../ingest/uploadHelpers.js';
import { expectStatus, startTestApp, type TestApp } from '../../support/server.js';

/**
 * Issue 26: ETL jobs on the work queue, claimed by several processes. A job's lease is renewed
 * every third of it while it runs, so a long job is never taken over while its runner is alive;
 * a runner whose lease was taken stops and records no outcome. Leases here last 400 ms and the
 * jobs run for several of them; every wait is for a condition.
 */
const LEASE_MS = 400;

let t: TestApp;
let runners: JobRunner[] = [];
let pools: { release: () => void }[] = [];

beforeEach(async () => {
  t = await startTestApp();
  // The service's own runner stays off; the test's runners take the jobs.
  await t.ctx.jobs.stop();
});

afterEach(async () => {
  for (const p of pools) p.release();
  for (const r of runners) await r.stop();
  runners = [];
  pools = [];
  await t.close();
});

const succeeded: EtlRunOutcome = { kind: 'succeeded', records: {}, rejected: 0, unchanged: 0, types: [], firstDay: null, lastDay: null };

/** A pool that holds every job until `release` says so. */
function heldPool(): EtlRunner & { started: EtlTask[]; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const started: EtlTask[] = [];
  pools.push({ release: () => release() });
  return {
    started,
    release,
    run: async (task) => {
      started.push(task);
      await released;
      return succeeded;
    },
    close: async () => {},
  };
}

function runner(pool: EtlRunner, holder: string): JobRunner {
  const r = new JobRunner({ queue: t.ctx.jobs.queue, holder, leaseMs: LEASE_MS, pollMs: 20 });
  r.register(etlJobHandler({ eventStore: t.ctx.eventStore, rawStore: t.ctx.rawStore, parsers: {}, dataKeys: t.ctx.dataKeys, pool }));
  runners.push(r);
  r.start();
  return r;
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function oneUpload(): Promise<string> {
  const tenant = await t.createTenant('etl-jobs');
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  const res = await postUpload(t, 'device-b', token, 'lease-1', requestFor('device-b', fixtureB()));
  expectStatus(res, 202);
  const stream = uploadStream(user.id, 'device-b', 'lease-1');
  // The job-feeder reactor enqueues the upload's job.
  await until(async () => (await t.ctx.jobs.queue.findLive(ETL_JOB, stream)) !== null);
  return stream;
}

const etlTypesOf = async (stream: string) => (await t.ctx.eventStore.readStream(stream)).map((e) => e.type).filter((type) => type.startsWith('etl.'));

describe('ETL jobs on the work queue across processes (issue 26)', () => {
  it('renews the lease of a job running for many lease lengths, so another runner never takes it over; the job ends once', async () => {
    const stream = await oneUpload();
    const first = heldPool();
    runner(first, 'proc-a');
    await until(() => first.started.length === 1);
    const second = heldPool();
    runner(second, 'proc-b');
    const fiveLeases = Date.now() + 5 * LEASE_MS;
    await until(() => Date.now() > fiveLeases);
    expect(second.started).toEqual([]);
    first.release();
    await until(async () => (await etlTypesOf(stream)).includes('etl.job_succeeded'));
    expect(await etlTypesOf(stream)).toEqual(['etl.job_started', 'etl.job_succeeded']);
    await until(async () => (await t.ctx.jobs.queue.findLive(ETL_JOB, stream)) === null);
  });

  it('a runner whose lease was taken over stops at its next renewal and records no outcome; the new holder finishes the job', async () => {
    const stream = await oneUpload();
    const first = heldPool();
    const a = runner(first, 'proc-a');
    await until(() => first.started.length === 1);
    // As if proc-a froze past its lease: a claim made after its expiry takes the job over.
    const job = (await t.ctx.jobs.queue.findLive(ETL_JOB, stream))!;
    const [stolen] = await t.ctx.jobs.queue.claim({ kinds: [ETL_JOB], n: 1, holder: 'thief', leaseMs: 8 * LEASE_MS, now: job.leaseExpiresAt! + 1 });
    expect(stolen!.job.generation).toBeGreaterThan(job.generation);
    // proc-a's run ends after the take-over: it finds the lease lost and writes no outcome.
    first.release();
    await until(() => a.active === 0);
    expect(await etlTypesOf(stream)).toEqual(['etl.job_started']);
    // The thief never renews; once its lease ran out, a live runner takes the job and ends it, once.
    const second = heldPool();
    second.release();
    runner(second, 'proc-b');
    await until(async () => (await etlTypesOf(stream)).includes('etl.job_succeeded'));
    await until(async () => (await t.ctx.jobs.queue.findLive(ETL_JOB, stream)) === null);
    expect(await etlTypesOf(stream)).toEqual(['etl.job_started', 'etl.job_started', 'etl.job_succeeded']);
  });
});

describe('the jobs of one claim append together (issue 37, small uploads processed in batches)', () => {
  it('the starts of jobs claimed together go as one multi-stream append, and each upload still gets its own start and its own outcome, once', async () => {
    const tenant = await t.createTenant('etl-batch');
    const streams: string[] = [];
    for (let i = 0; i < 3; i++) {
      const user = await t.createUser(tenant.apiKey);
      const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
      expectStatus(await postUpload(t, 'device-b', token, `batch-${i}`, requestFor('device-b', fixtureB())), 202);
      streams.push(uploadStream(user.id, 'device-b', `batch-${i}`));
    }
    for (const stream of streams) await until(async () => (await t.ctx.jobs.queue.findLive(ETL_JOB, stream)) !== null);
    const combined = vi.spyOn(t.ctx.eventStore, 'appendToStreams');
    const pool = heldPool();
    const r = new JobRunner({ queue: t.ctx.jobs.queue, holder: 'proc-batch', leaseMs: LEASE_MS, pollMs: 20 });
    r.register(etlJobHandler({ eventStore: t.ctx.eventStore, rawStore: t.ctx.rawStore, parsers: {}, dataKeys: t.ctx.dataKeys, pool, concurrency: 3 }));
    runners.push(r);
    r.start();
    await until(() => pool.started.length === 3);
    const starts = combined.mock.calls.map(([requests]) => requests.filter((q) => q.events.some((e) => e.type === 'etl.job_started')).map((q) => q.streamName));
    expect(starts.map((names) => [...names].sort())).toContainEqual([...streams].sort());
    pool.release();
    for (const stream of streams) await until(async () => (await etlTypesOf(stream)).includes('etl.job_succeeded'));
    for (const stream of streams) expect(await etlTypesOf(stream)).toEqual(['etl.job_started', 'etl.job_succeeded']);
  });
});

describe('ETL jobs and store failures (contracts §19)', () => {
  it('contracts §19: an ETL run failing on a busy store (as its thread reports it) far more often than the job has attempts records no failure, spends one attempt and succeeds once the store answers', async () => {
    const stream = await oneUpload();
    let failures = 0;
    const busy: EtlRunner = {
      run: async () => {
        if (++failures <= 12) throw new StoreFailureError('database is locked', 'busy');
        return succeeded;
      },
      close: async () => {},
    };
    const r = new JobRunner({ queue: t.ctx.jobs.queue, holder: 'proc-busy', leaseMs: LEASE_MS, pollMs: 20, transientBackoff: { firstMs: 1, maxMs: 4 } });
    r.register(etlJobHandler({ eventStore: t.ctx.eventStore, rawStore: t.ctx.rawStore, parsers: {}, dataKeys: t.ctx.dataKeys, pool: busy }));
    runners.push(r);
    r.start();
    await until(async () => (await etlTypesOf(stream)).includes('etl.job_succeeded'));
    expect(failures).toBe(13);
    expect((await etlTypesOf(stream)).filter((type) => type !== 'etl.job_started')).toEqual(['etl.job_succeeded']);
  });
});

