import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { uploadStream } from '../../../commands/ingestion/upload.js';
import type { EtlRunner } from '../../../src/processes/etl/etlPool.js';
import type { EtlRunOutcome } from '../../../src/processes/etl/etlTask.js';
import { BULK_UPLOAD_BYTES } from '../../../src/processes/etl/etlTask.js';
import { ETL_BULK_JOB, ETL_JOB, etlJob, etlJobHandlers } from '../../../src/processes/etl/etlWorker.js';
import { JobRunner } from '../../../src/processes/jobs/jobRunner.js';
import { fixtureB, postUpload, requestFor } from '../../ingest/uploadHelpers.js';
import { expectStatus, startTestApp, type TestApp } from '../../support/server.js';

/**
 * Issue 27: one user's big import must not hold other users' small uploads back. Uploads of
 * BULK_UPLOAD_BYTES or more run in a lane of their own (kind `etl.bulk`, one tier later, one at a
 * time per user); small ones in the small lane, several per ETL thread. Every wait is for a
 * condition; the big import is held by the test until the small upload is done.
 */
let t: TestApp;
let runner: JobRunner | null = null;
let releaseBig: () => void = () => {};

beforeEach(async () => {
  t = await startTestApp();
  // The service's own runner stays off; the test's runner takes the jobs.
  await t.ctx.jobs.stop();
});

afterEach(async () => {
  releaseBig();
  await runner?.stop();
  runner = null;
  await t.close();
});

const succeeded: EtlRunOutcome = { kind: 'succeeded', records: {}, rejected: 0, unchanged: 0, types: [], firstDay: null, lastDay: null };

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function upload(tenantKey: string, uploadId: string, body: Buffer): Promise<string> {
  const user = await t.createUser(tenantKey);
  const { token } = await t.mintToken(tenantKey, user.id, { scopes: ['upload'] });
  expectStatus(await postUpload(t, 'device-b', token, uploadId, requestFor('device-b', body)), 202);
  return uploadStream(user.id, 'device-b', uploadId);
}

const typesOf = async (stream: string) => (await t.ctx.eventStore.readStream(stream)).map((e) => e.type).filter((type) => type.startsWith('etl.'));

describe('per-user fair ETL pick (issue 27)', () => {
  it('an upload of BULK_UPLOAD_BYTES or more is a bulk-lane job, one tier later, locked per user; a smaller one or one of unknown size is a small-lane job of its tier', () => {
    const user = '0b0d5f6e-8d53-4c3f-9d57-2a5f0d7b1c11';
    expect(etlJob('upload-x', 'upload', { bytes: BULK_UPLOAD_BYTES, user_id: user })).toMatchObject({ kind: ETL_BULK_JOB, key: 'upload-x', priority: 1, lock: `etl-bulk:${user}` });
    expect(etlJob('upload-x', 'sync', { bytes: BULK_UPLOAD_BYTES - 1, user_id: user })).toEqual({ kind: ETL_JOB, key: 'upload-x', payload: { stream: 'upload-x' }, priority: 1 });
    expect(etlJob('upload-x', null)).toEqual({ kind: ETL_JOB, key: 'upload-x', payload: { stream: 'upload-x' }, priority: 0 });
  });

  it("a big import queued first and still running does not hold back a small upload of another user queued behind it, with one ETL thread", async () => {
    const tenant = await t.createTenant('fair-etl');
    const big = Buffer.concat([fixtureB(), Buffer.alloc(BULK_UPLOAD_BYTES, ' ')]);
    const bigStream = await upload(tenant.apiKey, 'big-import', big);
    await until(async () => (await t.ctx.jobs.queue.findLive(ETL_BULK_JOB, bigStream)) !== null);
    const smallStream = await upload(tenant.apiKey, 'small-one', fixtureB());
    await until(async () => (await t.ctx.jobs.queue.findLive(ETL_JOB, smallStream)) !== null);

    const started: string[] = [];
    const bigHeld = new Promise<void>((r) => (releaseBig = r));
    const pool: EtlRunner = {
      run: async (task) => {
        started.push(task.jobStream);
        if (task.jobStream === bigStream) await bigHeld;
        return succeeded;
      },
      close: async () => {},
    };
    runner = new JobRunner({ queue: t.ctx.jobs.queue, holder: 'proc-a', leaseMs: 10_000, pollMs: 20 });
    const etl = etlJobHandlers({ eventStore: t.ctx.eventStore, rawStore: t.ctx.rawStore, parsers: {}, dataKeys: t.ctx.dataKeys, pool, threads: 1, bulkThreads: 1 });
    for (const h of etl.handlers) runner.register(h);
    runner.start();

    await until(async () => (await typesOf(smallStream)).includes('etl.job_succeeded'));
    expect(started).toContain(bigStream);
    expect(await typesOf(bigStream)).toEqual(['etl.job_started']);
    releaseBig();
    await until(async () => (await typesOf(bigStream)).includes('etl.job_succeeded'));
  });

  it('two big imports of one user run one after the other, and never both hold the bulk lane', async () => {
    const tenant = await t.createTenant('fair-etl-2');
    const user = await t.createUser(tenant.apiKey);
    const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
    const big = Buffer.concat([fixtureB(), Buffer.alloc(BULK_UPLOAD_BYTES, ' ')]);
    const streams: string[] = [];
    for (const id of ['big-1', 'big-2']) {
      expectStatus(await postUpload(t, 'device-b', token, id, requestFor('device-b', big)), 202);
      streams.push(uploadStream(user.id, 'device-b', id));
    }
    await until(async () => (await Promise.all(streams.map((s) => t.ctx.jobs.queue.findLive(ETL_BULK_JOB, s)))).every(Boolean));
    const claimed = await t.ctx.jobs.queue.claim({ kinds: [ETL_BULK_JOB], n: 2, holder: 'proc-a', leaseMs: 10_000 });
    expect(claimed.map((c) => c.job.key)).toEqual([streams[0]]);
    expect(await t.ctx.jobs.queue.claim({ kinds: [ETL_BULK_JOB], n: 2, holder: 'proc-b', leaseMs: 10_000 })).toEqual([]);
  });
});
