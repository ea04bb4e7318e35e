import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIALS, type CredentialsDoc } from '../../commands/connections/connectionCredentials.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { eventually } from '../webhooks/receiver.js';
import { connectThroughSandbox } from './consentFlow.js';
import { queueNotificationRun } from '../../src/processes/sync/syncTriggers.js';
import { plan, testConnector, testData } from './syncTestConnector.js';
import type { LoadedRun } from '../../commands/sync/queueSyncRun.js';

/**
 * Scheduled pulls (issue 11: a per-connection schedule) and what freshness says of pulls
 * (contracts §6: syncing, failing, next_pull_at, last_received_at). The engine's clock is the
 * test's; the worker runs only when the test says.
 */

type Run = { id: number; trigger: string; status: string; window_start: string; window_end: string };

let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

beforeAll(async () => {
  sandbox = await startSandbox({ data: { oura: testData } });
  t = await startTestApp(
    { OURA_BASE_URL: sandbox.urls.oura!, OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id, OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret, SYNC_INTERVAL_MINUTES: '60' },
    { pullConnectors: { oura: testConnector }, syncClock: clock, syncSettings: { retryBaseMs: 60_000 }, syncPolling: false },
  );
  tenant = await t.createTenant('sync-schedule');
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

const runs = async (userId: string) => {
  const res = await t.call('GET', `/v1/users/${userId}/sync-runs`, { key: tenant.apiKey });
  expectStatus(res, 200);
  return (res.json() as { data: Run[] }).data;
};
const runDue = async () => {
  const outcomes = await t.ctx.sync.runDue();
  await t.ctx.settle();
  return outcomes;
};
async function connectedUser(): Promise<{ id: string }> {
  const user = await t.createUser(tenant.apiKey);
  await connectThroughSandbox(t, tenant.apiKey, user.id, 'oura');
  await eventually(async () => {
    await t.ctx.settle();
    return (await runs(user.id)).some((r) => r.trigger === 'backfill');
  });
  return { id: user.id };
}

describe('scheduled pulls and freshness (contracts §6)', () => {
  it('queues one scheduled run per interval after the backfill, from where the data ends minus an hour; freshness shows syncing, then next_pull_at, and failing after a failed pull', async () => {
    const { id } = await connectedUser();
    const fresh = async () => {
      const res = await t.call('GET', `/v1/users/${id}/freshness`, { key: tenant.apiKey });
      expectStatus(res, 200);
      return (res.json() as { data: { provider: string; state: string; next_pull_at: string | null; last_received_at: string | null; last_error: string | null }[] }).data.find((e) => e.provider === 'oura')!;
    };
    expect((await fresh()).state).toBe('syncing');
    await runDue();
    const after = await fresh();
    expect(after.next_pull_at).not.toBeNull();
    expect(after.last_received_at).not.toBeNull();
    const nextPull = Date.parse(after.next_pull_at!);
    expect(nextPull).toBeGreaterThan(clock().getTime());
    expect(nextPull - clock().getTime()).toBeLessThanOrEqual(3_600_000);
    // Nothing is scheduled before the slot begins.
    expect((await runDue()).length).toBe(0);
    offsetMs += nextPull - clock().getTime() + 1_000;
    plan.failAfter = 0;
    await runDue();
    const scheduled = (await runs(id)).filter((r) => r.trigger === 'scheduled');
    expect(scheduled.length).toBe(1);
    const backfill = (await runs(id)).find((r) => r.trigger === 'backfill')!;
    expect(Date.parse(scheduled[0]!.window_start)).toBe(Date.parse(backfill.window_end) - 3_600_000);
    expect(scheduled[0]!.status).toBe('retrying');
    // The stored payloads' ETL jobs end first (a job in progress reads as syncing).
    await eventually(async () => (await t.ctx.readStore.find('etl_jobs', { filter: { user_id: id, status: { $in: ['pending', 'running'] } } })).length === 0, 60_000);
    const failing = await fresh();
    expect(failing.state).toBe('failing');
    expect(failing.last_error).toBe('the connector stopped mid-run');
    // The same slot is not scheduled twice.
    plan.failAfter = null;
    offsetMs += 61_000;
    await runDue();
    expect((await runs(id)).filter((r) => r.trigger === 'scheduled').length).toBe(1);
    expect((await fresh()).state).not.toBe('failing');
  });
});

describe('tokens during pulls (issue 11: tokens refreshed before expiry)', () => {
  it('a token about to expire is refreshed before the pull calls with it, and the new tokens are kept sealed in the connection credentials record, not on its stream (issue 26); a refused refresh fails the run and needs the user again', async () => {
    const { id } = await connectedUser();
    await runDue();
    const record = () => t.ctx.readStore.get<CredentialsDoc>(CREDENTIALS, `connection-${id}-oura`);
    const streamTypes = async () => (await t.ctx.eventStore.readStream(`connection-${id}-oura`)).map((e) => e.type);
    const before = await streamTypes();
    const written = (await record())!;
    // The sandbox's tokens last a day: a day later (less the refresh margin) they are due for refresh.
    offsetMs += 86_400_000 - 2 * 60_000;
    expectStatus(await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey }), 202);
    for (let pass = 0; pass < 20 && (await runDue()).length > 0; pass++);
    const manual = (await runs(id)).find((r) => r.trigger === 'manual')!;
    expect(manual.status).toBe('succeeded');
    const after = (await record())!;
    expect(after.version).toBe(written.version + 1);
    expect(after.grant).toBe(written.grant);
    expect(await streamTypes()).toEqual(before);
    // Sealed, never the token itself.
    expect(JSON.stringify(after)).not.toMatch(/access_?token|refresh_?token/i);

    offsetMs += 86_400_000;
    sandbox.failures.fail('oura', 'invalid_grant');
    expectStatus(await t.call('POST', `/v1/users/${id}/connections/oura/sync`, { key: tenant.apiKey }), 202);
    for (let pass = 0; pass < 20 && (await runDue()).length > 0; pass++);
    const [last] = (await runs(id)).filter((r) => r.trigger === 'manual');
    expect(last!.status).toBe('failed');
    const conn = await t.call('GET', `/v1/users/${id}/connections`, { key: tenant.apiKey });
    expect((conn.json() as { data: { status: string; health: { action: string } }[] }).data[0]).toMatchObject({ status: 'needs_reauth', health: { action: 'reconnect' } });
  });
});

const notifyDeps = () => ({ eventStore: t.ctx.eventStore, now: () => t.ctx.sync.now(), enqueue: (run: LoadedRun) => t.ctx.sync.enqueue(run) });

describe('notification runs (spec "Sync run": trigger notification with data_type)', () => {
  it('a provider notification queues one run of the named data type and window; the same notification again queues nothing more', async () => {
    const { id } = await connectedUser();
    const window = { start: new Date(clock().getTime() - 3_600_000), end: clock() };
    const first = await queueNotificationRun(notifyDeps(), { userId: id, provider: 'oura', dataType: 'sleep', window, notificationId: 'delivery-1' });
    const again = await queueNotificationRun(notifyDeps(), { userId: id, provider: 'oura', dataType: 'sleep', window, notificationId: 'delivery-1' });
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ created: false, id: first.id });
    await t.ctx.settle();
    const run = (await runs(id)).find((r) => r.trigger === 'notification')! as Run & { data_type: string | null };
    expect(run).toMatchObject({ id: first.id, status: 'queued', data_type: 'sleep', window_start: window.start.toISOString(), window_end: window.end.toISOString() });
    plan.seen = [];
    for (let pass = 0; pass < 20 && (await runDue()).length > 0; pass++);
    expect(plan.seen).toContain('sleep');
    await expect(queueNotificationRun(notifyDeps(), { userId: id, provider: 'whoop', dataType: null, window, notificationId: 'x' })).rejects.toMatchObject({ code: 'not_found' });
  });
});
