import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestStream } from '../../../commands/ingestion/ingestedEvents.js';
import { startEtlJob } from '../../../commands/ingestion/startEtlJob.js';
import { uploadStream } from '../../../commands/ingestion/upload.js';
import { etlParsers } from '../../../src/sources/registry.js';
import { runEtlTask } from '../../../src/processes/etl/etlTask.js';
import type { EtlRunner } from '../../../src/processes/etl/etlPool.js';
import type { EtlRunOutcome, EtlTask } from '../../../src/processes/etl/etlTask.js';
import { EtlWorker } from '../../../src/processes/etl/etlWorker.js';
import type { LeaseSettings } from '../../../src/projector/leaseKeeper.js';
import { fixtureB, postUpload, requestFor } from '../../ingest/uploadHelpers.js';
import { expectStatus, startTestApp, type TestApp } from '../../support/server.js';

/**
 * Issue 14: ETL jobs claimed by several processes. A job's lease is renewed while it runs, so a
 * long job is not taken over while its worker is alive; a worker whose lease was taken records no
 * outcome. Leases here last 400 ms and the jobs run for several of them; every wait is for a
 * condition.
 */
const LEASE_MS = 400;
const RENEW_MS = 100;

let t: TestApp;
let workers: EtlWorker[] = [];

beforeEach(async () => {
  // Projections only: the service's own ETL worker stays off, the test's workers take the jobs.
  t = await startTestApp({}, { runBackground: 'projections' });
});

afterEach(async () => {
  for (const w of workers) await w.stop();
  workers = [];
  await t.close();
});

const succeeded: EtlRunOutcome = { kind: 'succeeded', records: {}, rejected: 0, unchanged: 0, types: [], firstDay: null, lastDay: null };

/** A runner that holds every job until `release` says so. */
function heldRunner(): EtlRunner & { started: EtlTask[]; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const started: EtlTask[] = [];
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

function worker(runner: EtlRunner, holder: string): EtlWorker {
  const leases: LeaseSettings = { store: t.ctx.readStore.leases!(), holder, leaseMs: LEASE_MS, renewMs: RENEW_MS };
  const w = new EtlWorker({ eventStore: t.ctx.eventStore, readStore: t.ctx.readStore, rawStore: t.ctx.rawStore, parsers: {}, dataKeys: t.ctx.dataKeys, pool: runner, pollMs: 20, leases });
  workers.push(w);
  w.start();
  return w;
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function oneUpload(): Promise<string> {
  const tenant = await t.createTenant('etl-leases');
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  const res = await postUpload(t, 'device-b', token, 'lease-1', requestFor('device-b', fixtureB()));
  expectStatus(res, 202);
  await t.ctx.projectors.waitForIdle();
  return uploadStream(user.id, 'device-b', 'lease-1');
}

const typesOf = async (stream: string) => (await t.ctx.eventStore.readStream(stream)).map((e) => e.type);

describe('ETL job leases across processes (issue 14)', () => {
  it('renews the lease of a job running for many lease lengths, so another worker never takes it over; the job ends once', async () => {
    const stream = await oneUpload();
    const first = heldRunner();
    worker(first, 'proc-a');
    await until(() => first.started.length === 1);
    const second = heldRunner();
    worker(second, 'proc-b');
    // Several lease lengths pass while the second worker keeps polling for orphans.
    const until5Leases = Date.now() + 5 * LEASE_MS;
    await until(() => Date.now() > until5Leases);
    expect(second.started).toEqual([]);
    first.release();
    await until(async () => (await typesOf(stream)).includes('etl.job_succeeded'));
    expect((await typesOf(stream)).filter((type) => type.startsWith('etl.'))).toEqual(['etl.job_started', 'etl.job_succeeded']);
  });

  it('takes over a job whose worker stopped renewing, and the worker that lost the lease records no outcome', async () => {
    const stream = await oneUpload();
    const first = heldRunner();
    const a = worker(first, 'proc-a');
    await until(() => first.started.length === 1);
    // As if the first worker froze past its lease: the lease passes to another holder (taken at
    // a time after its expiry) and is given up again, free for the second worker.
    const leases = t.ctx.readStore.leases!();
    const name = `etl-job:${stream}`;
    const held = (await leases.get(name))!;
    await until(async () => (await leases.acquire(name, 'proc-b-thief', LEASE_MS, held.expiresAt + 10 * LEASE_MS)) !== null);
    await leases.release((await leases.get(name))!);
    const second = heldRunner();
    worker(second, 'proc-b');
    await until(() => second.started.length === 1);
    expect(second.started[0]!.claimRevision).toBeGreaterThan(first.started[0]!.claimRevision!);
    second.release();
    await until(async () => (await typesOf(stream)).includes('etl.job_succeeded'));
    // The first run ends after the take-over and must not append its outcome.
    first.release();
    await a.stop();
    expect((await typesOf(stream)).filter((type) => type.startsWith('etl.'))).toEqual(['etl.job_started', 'etl.job_started', 'etl.job_succeeded']);
  });
});

describe('a run whose job was taken over (issue 14)', () => {
  it('stops before its first append and reports the take-over, leaving the records to the new claim', async () => {
    const stream = await oneUpload();
    const first = await startEtlJob(t.ctx.eventStore, stream, 'worker-1', LEASE_MS);
    const second = await startEtlJob(t.ctx.eventStore, stream, 'worker-2', LEASE_MS, { takeOverRunning: true });
    expect(second!.revision).toBeGreaterThan(first!.revision);
    const upload = first!.state.accepted!;
    const outcome = await runEtlTask(
      { eventStore: t.ctx.eventStore, rawStore: t.ctx.rawStore, parsers: etlParsers, dataKeys: t.ctx.dataKeys },
      { jobStream: stream, upload, claimRevision: first!.revision },
    );
    expect(outcome).toEqual({ kind: 'discarded', reason: 'taken over by another worker' });
    expect(await t.ctx.eventStore.readStream(ingestStream(upload.user_id, stream))).toEqual([]);
  });
});
