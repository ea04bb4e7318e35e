import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadState, uploadStream } from '../../../commands/ingestion/upload.js';
import type { EtlRunner } from '../../../src/processes/etl/etlPool.js';
import { endLostEtlAttempts, sweepEtlJobs } from '../../../src/processes/etl/etlSweep.js';
import { ETL_JOB, etlJobHandler } from '../../../src/processes/etl/etlWorker.js';
import { JobRunner } from '../../../src/processes/jobs/jobRunner.js';
import type { Claimed } from '../../../src/workqueue/workQueue.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { fixtureB, postUpload, requestFor } from '../../ingest/uploadHelpers.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';
import { Receiver } from '../../webhooks/receiver.js';

/**
 * Issue 26, the upload that stayed `running`: a process that dies holding an ETL job on its last
 * attempt leaves the queue to dead-letter the job at the next claim, and nobody told the upload
 * stream. The ETL sweep ends such an attempt: parked (`etl.job_parked`, `upload.finished` with
 * status parked), so the Upload resource (contracts §12) and its webhook end, once.
 * "A process dies" is a claim whose holder never renews nor writes again: what SIGKILL looks like
 * to the queue.
 */
const SWEEP_GRACE_MS = 30_000;
let t: TestApp;
let r: Receiver;
const runners: JobRunner[] = [];

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  r = await Receiver.start();
  // The service's own runner stays off: the test's processes take the jobs.
  await t.ctx.jobs.stop();
});
afterAll(async () => {
  for (const x of runners) await x.stop();
  await t?.close();
  await r?.close();
});

/** Normalisation that never ends: the attempt is still under way when its process "dies". */
const neverEnding: EtlRunner = { run: () => new Promise(() => {}), close: async () => {} };

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function uploadWithWebhook(): Promise<{ tenant: TenantHandle; userId: string; uploadId: string; stream: string; path: string }> {
  const tenant = await t.createTenant(`lost-${randomUUID().slice(0, 8)}`);
  const path = `/${randomUUID()}`;
  const res = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: r.url(path), event_types: ['upload.finished'] } });
  expectStatus(res, 201);
  r.trust(path, (res.json() as { secret: string }).secret);
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  const uploadId = `lost-${randomUUID()}`;
  expectStatus(await postUpload(t, 'device-b', token, uploadId, requestFor('device-b', fixtureB())), 202);
  const stream = uploadStream(user.id, 'device-b', uploadId);
  await until(async () => (await t.ctx.jobs.queue.findLive(ETL_JOB, stream)) !== null);
  return { tenant, userId: user.id, uploadId, stream, path };
}

/** Starts an attempt of the real ETL handler under `claimed`, then "dies": nothing renews it again. */
function startDoomedAttempt(claimed: Claimed): void {
  const handler = etlJobHandler({ eventStore: t.ctx.eventStore, rawStore: t.ctx.rawStore, parsers: {}, dataKeys: t.ctx.dataKeys, pool: neverEnding });
  void handler.run({ job: claimed.job, lease: () => claimed.lease, signal: new AbortController().signal, renew: async () => {} });
}

const etlTypesOf = async (stream: string) => (await t.ctx.eventStore.readStream(stream)).map((e) => e.type).filter((type) => type.startsWith('etl.') || type === 'upload.finished');

describe('an ETL job lost with its process on its last attempt (issue 26)', () => {
  it('is dead-lettered by the queue and the sweep ends its upload as parked: the Upload resource says so and upload.finished is delivered once', async () => {
    const u = await uploadWithWebhook();
    const queue = t.ctx.jobs.queue;
    // Four processes die holding the job before they record anything; each claim hands the last one back (the attempt counts).
    for (let attempt = 1; attempt <= 4; attempt++) {
      const [claimed] = await queue.claim({ kinds: [ETL_JOB], n: 1, holder: `dies-${attempt}`, leaseMs: 20 });
      expect(claimed!.job.attempts).toBe(attempt);
      await new Promise((res) => setTimeout(res, 30));
    }
    // The fifth dies while its attempt runs: etl.job_started is on the stream, the outcome never comes.
    const [last] = await queue.claim({ kinds: [ETL_JOB], n: 1, holder: 'dies-5', leaseMs: 50 });
    expect(last!.job.attempts).toBe(5);
    startDoomedAttempt(last!);
    await until(async () => (await etlTypesOf(u.stream)).includes('etl.job_started'));
    // A surviving process claims after the lease ran out: the queue dead-letters the spent job.
    const survivor = new JobRunner({ queue, holder: 'survivor', leaseMs: 400, pollMs: 20 });
    survivor.register(etlJobHandler({ eventStore: t.ctx.eventStore, rawStore: t.ctx.rawStore, parsers: {}, dataKeys: t.ctx.dataKeys, pool: neverEnding }));
    runners.push(survivor);
    await new Promise((res) => setTimeout(res, 60));
    survivor.start();
    await until(async () => (await queue.deadLetters({ kind: ETL_JOB })).some((j) => j.key === u.stream));
    // Its work here is done: left running, it would claim the next test's job before that test does.
    await survivor.stop();
    await t.ctx.projectors.waitForIdle();
    const before = await t.call('GET', `/v1/users/${u.userId}/uploads/device-b/${u.uploadId}`, { key: u.tenant.apiKey });
    expect((before.json() as { status: string }).status).toBe('processing');

    // The sweep, once the attempt's lease is GRACE past, records the lost last attempt; a second sweep finds nothing.
    const later = Date.now() + SWEEP_GRACE_MS + 1_000;
    expect(await endLostEtlAttempts(t.ctx.readStore, t.ctx.eventStore, queue, later)).toBe(1);
    await t.ctx.projectors.waitForIdle();
    expect(await endLostEtlAttempts(t.ctx.readStore, t.ctx.eventStore, queue, later)).toBe(0);
    expect(await etlTypesOf(u.stream)).toEqual(['etl.job_started', 'etl.job_parked', 'upload.finished']);

    const after = await t.call('GET', `/v1/users/${u.userId}/uploads/device-b/${u.uploadId}`, { key: u.tenant.apiKey });
    expectStatus(after, 200);
    expect(after.json()).toMatchObject({ status: 'parked', error: expect.stringContaining('attempt 5 was lost') });
    await until(() => r.at(u.path).length >= 1);
    const body = JSON.parse(r.at(u.path)[0]!.body) as { type: string; data: Record<string, unknown> };
    expect(body).toMatchObject({ type: 'upload.finished', data: { user_id: u.userId, upload_id: u.uploadId, status: 'parked' } });
    // Once: the endpoint's deliveries hold one upload.finished, whatever the sweeps do next.
    expect(await endLostEtlAttempts(t.ctx.readStore, t.ctx.eventStore, queue, later + 60_000)).toBe(0);
    await t.ctx.projectors.waitForIdle();
    const endpoints = (await t.call('GET', '/v1/webhooks', { key: u.tenant.apiKey })).json() as { data: { id: string }[] };
    const deliveries = await t.call('GET', `/v1/webhooks/${endpoints.data[0]!.id}/deliveries`, { key: u.tenant.apiKey });
    expect((deliveries.json() as { data: { event_type: string }[] }).data.filter((d) => d.event_type === 'upload.finished')).toHaveLength(1);
    expect(r.at(u.path)).toHaveLength(1);
  });

  it('leaves an attempt alone while its job is live, however old the recorded lease; ends a lost earlier attempt as failed, due again', async () => {
    const u = await uploadWithWebhook();
    const queue = t.ctx.jobs.queue;
    const [held] = await queue.claim({ kinds: [ETL_JOB], n: 1, holder: 'alive', leaseMs: 60_000 });
    startDoomedAttempt(held!);
    await until(async () => (await etlTypesOf(u.stream)).includes('etl.job_started'));
    await t.ctx.projectors.waitForIdle();
    const farLater = Date.now() + 10 * SWEEP_GRACE_MS;
    // Its holder renews the lease on the queue (not on the stream): the job is live, the attempt is not lost.
    expect(await endLostEtlAttempts(t.ctx.readStore, t.ctx.eventStore, queue, farLater)).toBe(0);
    expect(await etlTypesOf(u.stream)).toEqual(['etl.job_started']);
    // An operator cancels the job: the attempt under way is lost with attempts left, recorded as failed and due again.
    expect(await queue.cancelJob(held!.job.id, { reason: 'test' })).toBe(true);
    expect(await endLostEtlAttempts(t.ctx.readStore, t.ctx.eventStore, queue, farLater)).toBe(1);
    expect(await etlTypesOf(u.stream)).toEqual(['etl.job_started', 'etl.job_failed']);
    expect(r.at(u.path)).toHaveLength(0);
  });

  it('contracts §19 (issue 35): a job whose every process died before it recorded a start is dead-lettered by lease expiry; the sweep parks its Upload (upload.finished with parked, the parked event counting the five attempts) instead of queueing it again', async () => {
    const u = await uploadWithWebhook();
    const queue = t.ctx.jobs.queue;
    // Five processes die holding the job before they record anything: the upload stream never hears of them.
    for (let attempt = 1; attempt <= 5; attempt++) {
      const [claimed] = await queue.claim({ kinds: [ETL_JOB], n: 1, holder: `dies-early-${attempt}`, leaseMs: 20 });
      expect(claimed!.job.attempts).toBe(attempt);
      await new Promise((res) => setTimeout(res, 30));
    }
    // The next claim of the kind finds the spent job's lease run out: dead.
    expect(await queue.claim({ kinds: [ETL_JOB], n: 1, holder: 'survivor', leaseMs: 20 })).toEqual([]);
    expect((await queue.deadLetters({ kind: ETL_JOB })).find((j) => j.key === u.stream)).toMatchObject({ state: 'dead', attempts: 5 });
    await t.ctx.projectors.waitForIdle();
    expect((await t.call('GET', `/v1/users/${u.userId}/uploads/device-b/${u.uploadId}`, { key: u.tenant.apiKey })).json()).toMatchObject({ status: 'accepted' });

    const later = Date.now() + SWEEP_GRACE_MS + 1_000;
    expect(await endLostEtlAttempts(t.ctx.readStore, t.ctx.eventStore, queue, later)).toBe(0);
    // Not enqueued again (a job that kills its process would run forever): parked.
    expect(await sweepEtlJobs(t.ctx.readStore, t.ctx.eventStore, queue, later)).toBe(0);
    expect(await queue.findLive(ETL_JOB, u.stream)).toBeNull();
    expect(await etlTypesOf(u.stream)).toEqual(['etl.job_parked', 'upload.finished']);
    // The upload's history counts the five attempts the queue made, though none reached the stream.
    expect((await t.ctx.eventStore.readStream(u.stream)).find((e) => e.type === 'etl.job_parked')!.data).toMatchObject({ attempt: 5 });
    await t.ctx.projectors.waitForIdle();
    // A second sweep finds the upload parked: nothing more.
    expect(await sweepEtlJobs(t.ctx.readStore, t.ctx.eventStore, queue, later + 60_000)).toBe(0);
    expect(await etlTypesOf(u.stream)).toEqual(['etl.job_parked', 'upload.finished']);
    const after = await t.call('GET', `/v1/users/${u.userId}/uploads/device-b/${u.uploadId}`, { key: u.tenant.apiKey });
    expectStatus(after, 200);
    expect(after.json()).toMatchObject({ status: 'parked' });
    await until(() => r.at(u.path).length >= 1);
    expect(JSON.parse(r.at(u.path)[0]!.body)).toMatchObject({ type: 'upload.finished', data: { user_id: u.userId, upload_id: u.uploadId, status: 'parked' } });
  });

  it('contracts §19 (issue 35): a first attempt that recorded its start, then four that died before they could, end parked, not failed and queued again', async () => {
    const u = await uploadWithWebhook();
    const queue = t.ctx.jobs.queue;
    const [first] = await queue.claim({ kinds: [ETL_JOB], n: 1, holder: 'dies-started', leaseMs: 50 });
    startDoomedAttempt(first!);
    await until(async () => (await etlTypesOf(u.stream)).includes('etl.job_started'));
    await new Promise((res) => setTimeout(res, 60));
    for (let attempt = 2; attempt <= 5; attempt++) {
      const [claimed] = await queue.claim({ kinds: [ETL_JOB], n: 1, holder: `dies-early-${attempt}`, leaseMs: 20 });
      expect(claimed!.job.attempts).toBe(attempt);
      await new Promise((res) => setTimeout(res, 30));
    }
    expect(await queue.claim({ kinds: [ETL_JOB], n: 1, holder: 'survivor', leaseMs: 20 })).toEqual([]);
    await t.ctx.projectors.waitForIdle();
    const later = Date.now() + SWEEP_GRACE_MS + 1_000;
    expect(await endLostEtlAttempts(t.ctx.readStore, t.ctx.eventStore, queue, later)).toBe(1);
    expect(await etlTypesOf(u.stream)).toEqual(['etl.job_started', 'etl.job_parked', 'upload.finished']);
    await t.ctx.projectors.waitForIdle();
    expect(await sweepEtlJobs(t.ctx.readStore, t.ctx.eventStore, queue, later)).toBe(0);
    expect(await queue.findLive(ETL_JOB, u.stream)).toBeNull();
  });

  it('an upload retried after its job was dead-lettered is queued again by the sweep, not parked by the old dead letter', async () => {
    const u = await uploadWithWebhook();
    const queue = t.ctx.jobs.queue;
    const [claimed] = await queue.claim({ kinds: [ETL_JOB], n: 1, holder: 'parks', leaseMs: 60_000 });
    await queue.park(claimed!.lease, { error: 'poison' });
    // The operator's retry is recorded after the dead letter (its time is what the upload is due at): the feeder's job was lost.
    await new Promise((res) => setTimeout(res, 5));
    const { revision, state } = await loadState(t.ctx.eventStore, u.stream, uploadState);
    const a = state.accepted!;
    await t.ctx.eventStore.appendToStream(u.stream, [{ type: 'etl.job_retried', data: { user_id: a.user_id, tenant_id: a.tenant_id, by: 'test', at: new Date().toISOString() } }], { expectedRevision: revision! });
    await t.ctx.projectors.waitForIdle();
    // The feeder queues the retried upload's job; it is lost (cancelled), as if its process died before it could.
    await until(async () => (await queue.findLive(ETL_JOB, u.stream)) !== null);
    await queue.cancelJob((await queue.findLive(ETL_JOB, u.stream))!.id, { reason: 'test: the feeder job lost' });
    expect(await sweepEtlJobs(t.ctx.readStore, t.ctx.eventStore, queue, Date.now() + SWEEP_GRACE_MS + 1_000)).toBe(1);
    expect(await etlTypesOf(u.stream)).toEqual(['etl.job_retried']);
  });
});
