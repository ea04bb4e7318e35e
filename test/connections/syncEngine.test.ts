import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSyncAttempt } from '../../commands/sync/syncRunTransitions.js';
import { SYNC_RUN_KIND } from '../../src/processes/sync/syncJobs.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../projections/sync/syncRunsProjection.js';
import type { SyncRunView } from '../../queries/sync/listSyncRuns.js';
import { SyncWorker } from '../../src/processes/sync/syncWorker.js';
import { DEFAULT_SYNC_SETTINGS, type SyncSettings } from '../../commands/sync/syncSchedule.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { eventually, Receiver } from '../webhooks/receiver.js';
import { connectThroughSandbox } from './consentFlow.js';
import { plan, testConnector, testData } from './syncTestConnector.js';

/**
 * Spec "Sync run" (states, attempts, next_attempt_at, objects_stored, the manual-sync rules and
 * cancellation on disconnect) and "Providers and connections" (POST …/sync, GET …/sync-runs),
 * driven with a test-only connector in place of Oura's so each failure is planned; the clock of
 * the sync engine is the test's, and the worker runs only when the test says (`runDue`).
 */

type Run = SyncRunView;
type Conn = { provider: string; status: string; last_sync_at: string | null; initial_backfill_at: string | null; health: { healthy: boolean; reason: string | null; action: string | null; retry_at: string | null } };

const settings: Partial<SyncSettings> = { retryBaseMs: 60_000, leaseMs: 60_000, maxAttempts: 3, callTimeoutMs: 300, intervalMs: 7 * 86_400_000, backfillDays: 30 };
// Scheduled pulls are tested in syncSchedule.test.ts: here the interval is long, so the clock moves of these tests schedule nothing.

let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let receiver: Receiver;
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

beforeAll(async () => {
  sandbox = await startSandbox({ data: { oura: testData } });
  receiver = await Receiver.start();
  t = await startTestApp(
    {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      OURA_BASE_URL: sandbox.urls.oura!,
      OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id,
      OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret,
    },
    { pullConnectors: { oura: testConnector }, syncClock: clock, syncSettings: settings, syncPolling: false },
  );
  tenant = await t.createTenant('sync-a');
  other = await t.createTenant('sync-b');
  const hook = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: receiver.url('/sync'), event_types: ['sync.failed', 'connection.needs_reauth', 'connection.health_changed'] } });
  expectStatus(hook, 201);
  receiver.trust('/sync', (hook.json() as { secret: string }).secret);
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await sandbox?.close();
});
beforeEach(async () => {
  Object.assign(plan, { pages: 3, failAfter: null, pulls: 0, hold: null, seen: [], answer400: false });
  sandbox.failures.clear();
  // Runs an earlier test left queued go first, so each test sees only its own.
  await drain();
  plan.pulls = 0;
});

const runs = async (userId: string, query: Record<string, string> = {}, key = tenant.apiKey) => {
  const res = await t.call('GET', `/v1/users/${userId}/sync-runs`, { key, query });
  expectStatus(res, 200);
  return res.json() as { data: Run[]; next_cursor: string | null };
};
const connection = async (userId: string) => {
  const res = await t.call('GET', `/v1/users/${userId}/connections`, { key: tenant.apiKey });
  expectStatus(res, 200);
  return (res.json() as { data: Conn[] }).data.find((c) => c.provider === 'oura')!;
};
const settle = () => t.ctx.settle();
/** One pass of the engine, then the read models caught up. */
const runDue = async () => {
  const outcomes = await t.ctx.sync.runDue();
  await settle();
  return outcomes;
};

/** Passes until nothing is due. */
const drain = async () => {
  const all: string[] = [];
  for (let pass = 0; pass < 50; pass++) {
    const outcomes = await runDue();
    if (outcomes.length === 0) return all;
    all.push(...outcomes);
  }
  throw new Error('the engine kept finding due runs');
};

/** A connected user whose backfill run is queued (the reactor queues it on connect). */
async function connectedUser(): Promise<{ id: string; backfill: Run }> {
  const user = await t.createUser(tenant.apiKey);
  await connectThroughSandbox(t, tenant.apiKey, user.id, 'oura');
  const backfill = await eventually(async () => {
    await settle();
    return (await runs(user.id)).data.find((r) => r.trigger === 'backfill');
  });
  return { id: user.id, backfill };
}

const uploadsOf = async (userId: string) => (await t.ctx.readStore.find<{ _id: string }>('etl_jobs', { filter: { user_id: userId } })).length;

describe('backfill on connect (spec "Sync run")', () => {
  it('queues a backfill of the last 30 days when the connection is made; the worker stores every payload and the run succeeds with objects_stored; the connection shows last_sync_at and initial_backfill_at', async () => {
    const { id, backfill } = await connectedUser();
    expect(backfill).toMatchObject({ provider: 'oura', status: 'queued', attempts: 0, objects_stored: null, error: null, data_type: null, started_at: null, finished_at: null });
    const span = Date.parse(backfill.window_end) - Date.parse(backfill.window_start);
    expect(span).toBe(30 * 86_400_000);
    expect(await runDue()).toEqual(['succeeded']);
    const [done] = (await runs(id)).data;
    expect(done).toMatchObject({ id: backfill.id, status: 'succeeded', objects_stored: 3, attempts: 0, next_attempt_at: null });
    expect(done!.started_at).not.toBeNull();
    expect(done!.finished_at).not.toBeNull();
    expect(await uploadsOf(id)).toBe(3);
    const conn = await connection(id);
    expect(conn.last_sync_at).not.toBeNull();
    expect(conn.initial_backfill_at).toBe(conn.last_sync_at);
    expect(conn.health).toMatchObject({ healthy: true, action: null });
  });
});

describe('failed attempts (spec "Sync run": retrying, rate_limited, failed)', () => {
  it('a run that stops mid-way is retrying with a backoff; its retry stores nothing twice and succeeds with every payload', async () => {
    const { id } = await connectedUser();
    plan.failAfter = 2;
    const before = clock().getTime();
    expect(await runDue()).toEqual(['retrying']);
    let [run] = (await runs(id)).data;
    expect(run).toMatchObject({ status: 'retrying', attempts: 1, error: 'the connector stopped mid-run' });
    const wait = Date.parse(run!.next_attempt_at!) - before;
    expect(wait).toBeGreaterThanOrEqual(60_000);
    expect(wait).toBeLessThan(70_000);
    expect(await uploadsOf(id)).toBe(2);
    expect((await connection(id)).health).toMatchObject({ healthy: false, reason: 'provider_unavailable', action: 'wait', retry_at: run!.next_attempt_at });
    // Not due yet: nothing runs.
    expect(await runDue()).toEqual([]);
    plan.failAfter = null;
    offsetMs += 61_000;
    await drain();
    [run] = (await runs(id)).data;
    expect(run).toMatchObject({ status: 'succeeded', attempts: 1, objects_stored: 3, next_attempt_at: null });
    expect(await uploadsOf(id)).toBe(3);
    expect((await connection(id)).health).toMatchObject({ healthy: true, reason: null, action: null });
  });

  it('a process that died holding a run: once its lease ran out another worker takes the run over and finishes it, storing nothing twice', async () => {
    const { id, backfill } = await connectedUser();
    const stream = (await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: id } }))[0]!._id;
    // A worker claims it on the work queue, starts its attempt and dies before storing anything more.
    const claimed = await eventually(async () => {
      const [job] = await t.ctx.jobs.queue.claim({ kinds: [SYNC_RUN_KIND], n: 1, holder: 'dead-worker', leaseMs: 60_000, now: clock().getTime() });
      return job;
    });
    expect(claimed.job.key).toBe(stream);
    expect('reason' in (await startSyncAttempt(t.ctx.eventStore, stream, 'dead-worker', clock()))).toBe(false);
    await settle();
    expect((await runs(id)).data[0]).toMatchObject({ id: backfill.id, status: 'running' });
    expect(await runDue()).toEqual([]);
    offsetMs += 61_000;
    await drain();
    // The attempt that died counts as a failed one.
    expect((await runs(id)).data[0]).toMatchObject({ status: 'succeeded', objects_stored: 3, attempts: 1, error: 'the attempt ended without an outcome (its process stopped)' });
    expect(await uploadsOf(id)).toBe(3);
  });

  it('a 429 makes the run rate_limited until now + Retry-After, and the connection says wait until then', async () => {
    const { id } = await connectedUser();
    sandbox.failures.fail('oura', 'rate_limited', { retryAfterSeconds: 120 });
    const before = clock().getTime();
    expect(await runDue()).toEqual(['rate_limited']);
    const [run] = (await runs(id)).data;
    expect(run).toMatchObject({ status: 'rate_limited', attempts: 1 });
    const wait = Date.parse(run!.next_attempt_at!) - before;
    expect(wait).toBeGreaterThanOrEqual(120_000);
    expect(wait).toBeLessThan(130_000);
    expect((await connection(id)).health).toMatchObject({ healthy: false, reason: 'rate_limited', action: 'wait', retry_at: run!.next_attempt_at });
    offsetMs += 121_000;
    await drain();
    expect((await runs(id)).data[0]).toMatchObject({ status: 'succeeded', attempts: 1, objects_stored: 3 });
    // Both changes of health are announced: rate limited (wait), then healthy again.
    const health = () =>
      receiver
        .at('/sync')
        .map((r) => r.verified as { type: string; data: Record<string, unknown> } | null)
        .filter((e) => e?.type === 'connection.health_changed' && e.data.user_id === id)
        .map((e) => e!.data);
    await receiver.waitFor(() => health().length >= 2);
    expect(health()).toEqual([
      expect.objectContaining({ provider: 'oura', healthy: false, reason: 'rate_limited', action: 'wait', retry_at: run!.next_attempt_at, previous_reason: null }),
      expect.objectContaining({ provider: 'oura', healthy: true, reason: null, action: null, previous_reason: 'rate_limited', broken_since: expect.any(String) }),
    ]);
  });

  it('a provider unavailable on every attempt: retrying with growing waits, then failed after the last attempt, with sync.failed delivered', async () => {
    const { id } = await connectedUser();
    sandbox.failures.fail('oura', 'server_error', { times: 100 });
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 2; attempt++) {
      const before = clock().getTime();
      expect(await runDue()).toEqual(['retrying']);
      const [run] = (await runs(id)).data;
      expect(run).toMatchObject({ status: 'retrying', attempts: attempt });
      expect(run!.error).toContain('503');
      waits.push(Date.parse(run!.next_attempt_at!) - before);
      offsetMs += Date.parse(run!.next_attempt_at!) - before + 1_000;
    }
    expect(waits[1]!).toBeGreaterThan(waits[0]! * 3);
    expect(await runDue()).toEqual(['failed']);
    const [run] = (await runs(id)).data;
    expect(run).toMatchObject({ status: 'failed', attempts: 3, next_attempt_at: null });
    expect(run!.finished_at).not.toBeNull();
    expect((await connection(id)).status).toBe('active');
    await receiver.waitFor((all) => all.some((r) => (r.verified as { type?: string; data?: { user_id?: string } } | null)?.data?.user_id === id && (r.verified as { type: string }).type === 'sync.failed'));
    const failed = receiver.at('/sync').map((r) => r.verified as { type: string; data: Record<string, unknown> }).find((e) => e.type === 'sync.failed' && e.data.user_id === id);
    expect(failed!.data).toMatchObject({ provider: 'oura', reason: 'pull_failed', consecutive_failures: 3, sync_run_id: run!.id });
  });

  it('a provider that does not answer in time: the attempt is retrying, and the next one succeeds', async () => {
    const { id } = await connectedUser();
    sandbox.failures.fail('oura', 'timeout');
    expect(await runDue()).toEqual(['retrying']);
    const [run] = (await runs(id)).data;
    expect(run).toMatchObject({ status: 'retrying', attempts: 1 });
    expect(run!.error).toContain('time-out');
    offsetMs += 61_000;
    await drain();
    expect((await runs(id)).data[0]).toMatchObject({ status: 'succeeded', attempts: 1, objects_stored: 3 });
  });

  it('a refused grant fails the run at once and sends the connection to needs_reauth with action reconnect', async () => {
    const { id } = await connectedUser();
    sandbox.revokeConsent('oura');
    expect(await runDue()).toEqual(['failed']);
    const [run] = (await runs(id)).data;
    expect(run).toMatchObject({ status: 'failed', attempts: 1 });
    const conn = await connection(id);
    expect(conn.status).toBe('needs_reauth');
    expect(conn.health).toMatchObject({ healthy: false, action: 'reconnect' });
  });
});

describe('requests the provider rejects (a 4xx other than 401, 403 and 429)', () => {
  it('fail the run at once without retrying and keep the connection active: asking again, or asking the user, would change nothing', async () => {
    const { id } = await connectedUser();
    plan.answer400 = true;
    expect(await runDue()).toEqual(['failed']);
    const [run] = (await runs(id)).data;
    expect(run).toMatchObject({ status: 'failed', attempts: 1, next_attempt_at: null });
    expect(run!.error).toContain('400');
    const conn = await connection(id);
    expect(conn.status).toBe('active');
    expect(conn.health).toMatchObject({ healthy: false, action: 'none' });
    await receiver.waitFor((all) => all.some((r) => (r.verified as { type?: string; data?: { user_id?: string } } | null)?.data?.user_id === id && (r.verified as { type: string }).type === 'sync.failed'));
    const failed = receiver.at('/sync').map((r) => r.verified as { type: string; data: Record<string, unknown> }).find((e) => e.type === 'sync.failed' && e.data.user_id === id);
    expect(failed!.data).toMatchObject({ provider: 'oura', reason: 'request_rejected', sync_run_id: run!.id });
  });
});

describe('leases (issue 11: several processes never run the same pull)', () => {
  it('two workers on the same stores: only one claims the run and pulls it', async () => {
    const { id } = await connectedUser();
    let release!: () => void;
    plan.hold = new Promise<void>((r) => (release = r));
    const second = new SyncWorker({
      queue: t.ctx.jobs.queue,
      eventStore: t.ctx.eventStore,
      readStore: t.ctx.readStore,
      rawStore: t.ctx.rawStore,
      dataKeys: t.ctx.dataKeys,
      sealer: t.ctx.valueSealer,
      providers: t.ctx.config.providers,
      connectors: { oura: testConnector },
      settings: { ...DEFAULT_SYNC_SETTINGS, ...settings },
      now: clock,
      schedule: false,
    });
    const first = t.ctx.sync.runDue();
    await eventually(async () => plan.pulls === 1);
    await settle();
    expect(await second.runDue()).toEqual([]);
    release();
    expect(await first).toEqual(['succeeded']);
    expect(plan.pulls).toBe(1);
    await settle();
    expect((await runs(id)).data[0]).toMatchObject({ status: 'succeeded', objects_stored: 3 });
  });
});

describe('POST /v1/users/{id}/connections/{provider}/sync (spec "Providers and connections")', () => {
  it('queues a manual run (202, Location) whose window starts where the data ends minus one hour; while it is queued another request answers 200 with the same run', async () => {
    const { id } = await connectedUser();
    await runDue(); // the backfill
    const first = await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey, body: {} });
    expectStatus(first, 202);
    const run = first.json() as Run;
    expect(first.headers.location).toBe(`/v1/users/${id}/sync-runs/${run.id}`);
    expect(run).toMatchObject({ trigger: 'manual', status: 'queued', provider: 'oura', attempts: 0 });
    const backfill = (await runs(id)).data.find((r) => r.trigger === 'backfill')!;
    expect(Date.parse(run.window_start)).toBe(Date.parse(backfill.window_end) - 3_600_000);
    const again = await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey });
    expectStatus(again, 200);
    expect((again.json() as Run).id).toBe(run.id);
    expect(again.headers.location).toBe(first.headers.location);
    const one = await t.call('GET', first.headers.location as string, { key: tenant.apiKey });
    expectStatus(one, 200);
    expect((one.json() as Run).id).toBe(run.id);
    // Once it ran, a new request queues a new run.
    expect(await runDue()).toEqual(['succeeded']);
    const next = await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey, body: { from: new Date(clock().getTime() - 5 * 86_400_000).toISOString() } });
    expectStatus(next, 202);
    expect((next.json() as Run).id).not.toBe(run.id);
    expect(Date.parse((next.json() as Run).window_end) - Date.parse((next.json() as Run).window_start)).toBeGreaterThanOrEqual(5 * 86_400_000);
  });

  it('two manual requests at once queue one run', async () => {
    const { id } = await connectedUser();
    const [a, b] = await Promise.all([
      t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey }),
      t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey }),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 202]);
    expect((a.json() as Run).id).toBe((b.json() as Run).id);
  });

  it('answers 409 for a connection that needs reauthorisation or is disconnected, and cancels its unfinished runs on disconnect', async () => {
    const { id } = await connectedUser();
    const queued = await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey });
    expectStatus(queued, 202);
    // Spec "Coverage report": pending_jobs counts provider pulls pending or running (nothing is stored yet: no ETL job).
    const pending = async () => ((await t.call('GET', `/v1/users/${id}/coverage`, { key: tenant.apiKey })).json() as { pending_jobs: number }).pending_jobs;
    await settle();
    expect(await pending()).toBe(2);
    expectStatus(await t.call('DELETE', `/v1/users/${id}/connections/oura`, { key: tenant.apiKey }), 204);
    const cancelled = await eventually(async () => {
      await settle();
      const all = (await runs(id)).data;
      return all.every((r) => r.status === 'cancelled') ? all : null;
    });
    expect(cancelled.length).toBe(2);
    expect(cancelled.every((r) => r.finished_at !== null)).toBe(true);
    expect(await pending()).toBe(0);
    expectProblem(await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey }), 409);
    await drain();
    expect((await runs(id)).data.every((r) => r.status === 'cancelled')).toBe(true);

    const reauth = await connectedUser();
    sandbox.revokeConsent('oura');
    expect(await runDue()).toEqual(['failed']);
    const refused = expectProblem(await t.call('POST', `/v1/users/${reauth.id}/connections/oura/sync`, { key: tenant.apiKey }), 409);
    expect(refused.detail).toContain('needs_reauth');
  });

  it('bad inputs are 400 and queue nothing; unknown providers, users without the connection and another tenant are 404', async () => {
    const { id } = await connectedUser();
    const count = (await runs(id)).data.length;
    const post = (body: unknown, userId = id, provider = 'oura', key = tenant.apiKey) => t.call('POST', `/v1/users/${userId}/connections/${provider}/sync`, { key, body: body as Record<string, unknown> });
    expectProblem(await post({ from: 'yesterday' }), 400);
    expectProblem(await post({ from: new Date(clock().getTime() - 31 * 86_400_000).toISOString() }), 400);
    expectProblem(await post({ from: new Date(clock().getTime() + 3_600_000).toISOString() }), 400);
    expectProblem(await post({ window: 'all' }), 400);
    expect((await runs(id)).data.length).toBe(count);
    expectProblem(await post({}, id, 'nosuch'), 404);
    expectProblem(await post({}, id, 'fitbit'), 404);
    expectProblem(await post({}, id, 'oura', other.apiKey), 404);
    expectProblem(await post({}, '00000000-0000-4000-8000-000000000000'), 404);
  });
});

describe('GET /v1/users/{id}/sync-runs (spec "Providers and connections")', () => {
  it('lists the runs newest first, paged, filtered by provider; another tenant gets 404; bad cursor and limit are 400', async () => {
    const { id } = await connectedUser();
    await runDue();
    expectStatus(await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey }), 202);
    await settle();
    const page1 = await runs(id, { limit: '1' });
    expect(page1.data.length).toBe(1);
    expect(page1.data[0]!.trigger).toBe('manual');
    const page2 = await runs(id, { limit: '1', cursor: page1.next_cursor! });
    expect(page2.data[0]!.trigger).toBe('backfill');
    expect(page2.next_cursor).toBeNull();
    expect((await runs(id, { provider: 'fitbit' })).data).toEqual([]);
    expect((await runs(id, { provider: 'oura' })).data.length).toBe(2);
    expectProblem(await t.call('GET', `/v1/users/${id}/sync-runs`, { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/users/${id}/sync-runs/${page1.data[0]!.id}`, { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/users/${id}/sync-runs/123456789`, { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/users/${id}/sync-runs/abc`, { key: tenant.apiKey }), 400);
    expectProblem(await t.call('GET', `/v1/users/${id}/sync-runs`, { key: tenant.apiKey, query: { cursor: 'garbage' } }), 400);
    expectProblem(await t.call('GET', `/v1/users/${id}/sync-runs`, { key: tenant.apiKey, query: { limit: '0' } }), 400);
    // The admin mirror: the manual run already queued is answered (200), its Location under the admin routes.
    const adminSync = await t.call('POST', `/v1/admin/tenants/${tenant.id}/users/${id}/connections/oura/sync`, { key: t.adminKey });
    expectStatus(adminSync, 200);
    expect(adminSync.headers.location).toBe(`/v1/admin/tenants/${tenant.id}/users/${id}/sync-runs/${page1.data[0]!.id}`);
    expectStatus(await t.call('GET', adminSync.headers.location as string, { key: t.adminKey }), 200);
    // The admin mirror answers the same list.
    const admin = await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/${id}/sync-runs`, { key: t.adminKey });
    expectStatus(admin, 200);
    expect((admin.json() as { data: Run[] }).data.map((r) => r.id)).toEqual([page1.data[0]!.id, page2.data[0]!.id]);
  });
});

describe('erasure (spec "Credentials and users": pull jobs and the sync log go with the data)', () => {
  it("a user's deletion cancels the queued runs and erases them: nothing is pulled for the user afterwards", async () => {
    const { id } = await connectedUser();
    expectStatus(await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey }), 202);
    await settle();
    const streams = (await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: id } })).map((r) => r._id);
    expect(streams.length).toBe(2);
    const jobId = await t.deleteUser(tenant.apiKey, id);
    expect((await t.waitForDeletion(tenant.apiKey, jobId)).status).toBe('done');
    await settle();
    expect(await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: id } })).toEqual([]);
    for (const s of streams) await expect(t.ctx.eventStore.readStream(s)).rejects.toThrow();
    await drain();
    expect(plan.pulls).toBe(0);
  });

  it("disconnecting with delete_data=true cancels the connection's runs and erases them with the provider's data", async () => {
    const { id } = await connectedUser();
    await drain();
    const streams = (await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: id } })).map((r) => r._id);
    expect(streams.length).toBe(1);
    const res = await t.call('DELETE', `/v1/users/${id}/connections/oura`, { key: tenant.apiKey, query: { delete_data: 'true' } });
    expectStatus(res, 202);
    const job = await eventually(async () => {
      const j = await t.call('GET', `/v1/deletions/${(res.json() as { job_id: string }).job_id}`, { key: tenant.apiKey });
      const body = j.json() as { status: string };
      return body.status === 'done' || body.status === 'failed' ? body : null;
    }, 30_000);
    expect(job.status).toBe('done');
    await settle();
    expect((await runs(id)).data).toEqual([]);
    for (const s of streams) await expect(t.ctx.eventStore.readStream(s)).rejects.toThrow();
  });
});
