import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionDoc } from '../../../../projections/connections/connectionsProjection.js';
import { SYNC_RUNS, type SyncRunDoc } from '../../../../projections/sync/syncRunsProjection.js';
import { garminDeregistration, garminNotification, garminPermissionsChange, garminUserIdOf, pushTo } from '../../../../src/sandbox/data/garmin.js';
import { SANDBOX_CLIENTS } from '../../../../src/sandbox/sandboxClients.js';
import { CONTROL_PATH, sandboxUserOf, type Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { connectedProviderUser, connectThroughSandbox, type SandboxedApp, startSandboxedApp } from '../../../connections/consentFlow.js';
import { waitForEtl } from '../../../ingest/uploadHelpers.js';
import { expectStatus, type TenantHandle, type TestApp } from '../../../support/server.js';

/**
 * POST /inbound/garmin/{secret} end to end over HTTP (issue 11 "Connectors for real providers",
 * Garmin push; spec "Sync run" trigger notification with data_type; docs/connectors/garmin.md):
 * a user connects through the sandbox, which then pushes realistic notifications to the service.
 */
const SECRET = 'inbound-secret-0123456789abcdef';
const WINDOW = { start: new Date('2026-03-27T00:00:00Z'), end: new Date('2026-03-29T00:00:00Z') };

let world: SandboxedApp;
let sandbox: Sandbox;
let t: TestApp;
let base: string;
let tenant: TenantHandle;
let other: TenantHandle;
let userId: string;
let garminUser: string;

const inbound = (secret = SECRET) => `${base}/inbound/garmin/${secret}`;
const post = (body: string, secret = SECRET, type = 'application/json') => fetch(inbound(secret), { method: 'POST', headers: { 'content-type': type }, body });

beforeAll(async () => {
  world = await startSandboxedApp(['garmin'], { GARMIN_INBOUND_SECRET: SECRET });
  ({ sandbox, t, base } = world);
  tenant = await t.createTenant('garmin-a');
  other = await t.createTenant('garmin-b');
  userId = (await t.createUser(tenant.apiKey)).id;
  garminUser = await connectedProviderUser(t, tenant.apiKey, userId, 'garmin');
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe('Garmin push notifications', () => {
  it('the connection knows the Garmin user id read at consent (GET /wellness-api/rest/user/id)', () => {
    // The sandbox plays one person per application, and answers GET /wellness-api/rest/user/id with their Garmin id.
    expect(garminUser).toBe(garminUserIdOf(sandboxUserOf('garmin')));
  });

  it('stores each push raw, normalises it, serves it through the read routes and lists a notification sync run with its data type', async () => {
    for (const type of ['dailies', 'sleeps', 'activityDetails', 'hrv'] as const) {
      expect(await pushTo(inbound(), garminNotification(garminUser, type, WINDOW)), type).toBe(200);
    }
    await waitForEtl(t, tenant.apiKey, userId);

    const hr = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', start: '2026-03-27', end: '2026-03-28', limit: '1000' } });
    expectStatus(hr, 200);
    expect((hr.json() as { data: unknown[] }).data.length).toBeGreaterThan(90);
    const sleep = await t.call('GET', `/v1/users/${userId}/sleep`, { key: tenant.apiKey, query: { start: '2026-03-26', end: '2026-03-29' } });
    expectStatus(sleep, 200);
    expect((sleep.json() as { data: unknown[] }).data).toHaveLength(2);
    const workouts = await t.call('GET', `/v1/users/${userId}/workouts`, { key: tenant.apiKey, query: { start: '2026-03-27', end: '2026-03-29' } });
    expectStatus(workouts, 200);
    expect((workouts.json() as { data: { type: string }[] }).data.map((w) => w.type)).toContain('running');
    const hrv = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { type: 'hrv_rmssd', start: '2026-03-26', end: '2026-03-29' } });
    expect((hrv.json() as { data: unknown[] }).data).toHaveLength(2);

    const listed = await t.call('GET', `/v1/users/${userId}/sync-runs`, { key: tenant.apiKey });
    expectStatus(listed, 200);
    const pushed = (listed.json() as { data: { trigger: string; data_type: string | null; status: string; objects_stored: number | null }[] }).data.filter((r) => r.trigger === 'notification');
    expect(pushed.map((r) => r.data_type).sort()).toEqual(['activityDetails', 'dailies', 'hrv', 'sleeps']);
    expect(pushed.every((r) => r.status === 'succeeded' && r.objects_stored === 1)).toBe(true);
  }, 60_000);

  it('the sandbox pushes on request over HTTP (control action push), as Garmin does to a registered endpoint', async () => {
    const control = new URL(CONTROL_PATH, sandbox.urls.garmin);
    control.search = new URLSearchParams({ action: 'push', url: inbound(), type: 'respiration', start: '2026-03-27T00:00:00Z', end: '2026-03-28T00:00:00Z' }).toString();
    const res = await fetch(control, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ pushed: 'respiration', user_id: garminUser, answered: 200 });
    const runs = await t.call('GET', `/v1/users/${userId}/sync-runs`, { key: tenant.apiKey });
    expect((runs.json() as { data: { data_type: string | null }[] }).data.map((r) => r.data_type)).toContain('respiration');
    control.search = new URLSearchParams({ action: 'push', url: inbound(), type: 'steps' }).toString();
    expect((await fetch(control, { method: 'POST' })).status).toBe(400);
  });

  it('a delivery Garmin retries stores nothing twice and records no second run', async () => {
    const body = garminNotification(garminUser, 'epochs', WINDOW);
    expect(await pushTo(inbound(), body)).toBe(200);
    const before = (await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: userId } })).length;
    const again = await post(JSON.stringify(body));
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ stored: 1, ignored: 0 });
    await t.ctx.projectors.waitForIdle();
    expect((await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: userId } })).length).toBe(before);
  });

  it('refuses bodies Garmin does not send with a 400 problem, other content types with 415, over 16 MiB with 413, a wrong secret with 401; nothing is stored', async () => {
    const runs = (await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: userId } })).length;
    for (const bad of ['{not json', '[]', '{"steps": []}', '{"dailies": {}}', '{"dailies": [{"summaryId": "no user"}]}']) {
      const res = await post(bad);
      expect(res.status, bad).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect((await post('{}', SECRET, 'text/plain')).status).toBe(415);
    const huge = await post(JSON.stringify({ dailies: [{ userId: garminUser, padding: 'x'.repeat(16 * 1024 * 1024) }] }));
    expect(huge.status).toBe(413);
    const wrong = await post(JSON.stringify(garminNotification(garminUser, 'dailies', WINDOW)), 'not-the-secret-000000000000000');
    expect(wrong.status).toBe(401);
    await t.ctx.projectors.waitForIdle();
    expect((await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: userId } })).length).toBe(runs);
    const unknownProvider = await fetch(`${base}/inbound/oura/${SECRET}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unknownProvider.status).toBe(404);
  });

  it('ignores and counts users it does not know, and a user connected only by another tenant whose address differs', async () => {
    const stranger = '00000000-0000-4000-a000-00000000beef';
    const res = await post(JSON.stringify(garminNotification(stranger, 'dailies', WINDOW)));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ stored: 0, ignored: 1 });

    // Tenant B connects with its own Garmin application and its own inbound secret.
    const keys = await t.call('PUT', `/v1/admin/tenants/${other.id}/providers/garmin/keys`, {
      key: t.adminKey,
      body: { keys: { CLIENT_ID: SANDBOX_CLIENTS.garmin!.id, CLIENT_SECRET: SANDBOX_CLIENTS.garmin!.secret, INBOUND_SECRET: 'tenant-b-secret-abcdefghijklmnop' } },
    });
    expectStatus(keys, 200);
    const bUser = (await t.createUser(other.apiKey)).id;
    await connectThroughSandbox(t, other.apiKey, bUser, 'garmin');
    // The sandbox plays one person per application: both tenants' users are the same Garmin user.
    const bDoc = await t.ctx.readStore.get<ConnectionDoc>('connections', `${bUser}:garmin`);
    expect(bDoc!.provider_user_id).toBe(garminUser);
    const viaInstance = await post(JSON.stringify(garminNotification(garminUser, 'bodyComps', WINDOW)));
    expect(await viaInstance.json()).toMatchObject({ stored: 1, ignored: 0 });
    const viaB = await post(JSON.stringify(garminNotification(garminUser, 'bodyComps', WINDOW)), 'tenant-b-secret-abcdefghijklmnop');
    expect(await viaB.json()).toMatchObject({ stored: 1 });
    await t.ctx.projectors.waitForIdle();
    const aRuns = (await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: userId, data_type: 'bodyComps' } })).length;
    const bRuns = (await t.ctx.readStore.find<SyncRunDoc>(SYNC_RUNS, { filter: { user_id: bUser, data_type: 'bodyComps' } })).length;
    expect([aRuns, bRuns]).toEqual([1, 1]);
    // Tenant A cannot read tenant B's user.
    expect((await t.call('GET', `/v1/users/${bUser}/samples`, { key: tenant.apiKey, query: { type: 'body_mass' } })).statusCode).toBe(404);
  }, 60_000);

  it('a permission change revokes the categories no longer covered; a deregistration disconnects; later pushes are ignored', async () => {
    const narrowed = await pushTo(inbound(), garminPermissionsChange(garminUser, ['ACTIVITY_EXPORT'], new Date()));
    expect(narrowed).toBe(200);
    const history = await t.call('GET', `/v1/users/${userId}/consents/history`, { key: tenant.apiKey });
    const revoked = (history.json() as { data: { action: string; category: string; actor_id: string }[] }).data.filter((e) => e.action === 'revoked' && e.actor_id === 'garmin');
    expect(revoked.map((e) => e.category).sort()).toEqual(['activity', 'body', 'heart', 'sleep']);
    const sleepAfter = await post(JSON.stringify(garminNotification(garminUser, 'sleeps', { start: new Date('2026-04-02T00:00:00Z'), end: new Date('2026-04-03T00:00:00Z') })));
    expect(await sleepAfter.json()).toMatchObject({ stored: 0, ignored: 1 });

    // Given back at Garmin: the categories are granted again, with Garmin as actor, and sleep is stored again.
    expect(await pushTo(inbound(), garminPermissionsChange(garminUser, ['ACTIVITY_EXPORT', 'HEALTH_EXPORT'], new Date()))).toBe(200);
    const again = await t.call('GET', `/v1/users/${userId}/consents/history`, { key: tenant.apiKey, query: { limit: '4' } });
    expect((again.json() as { data: { action: string; category: string; actor_id: string }[] }).data.map((e) => [e.action, e.actor_id]).sort()).toEqual(Array(4).fill(['granted', 'garmin']));
    const sleepBack = await post(JSON.stringify(garminNotification(garminUser, 'sleeps', { start: new Date('2026-04-02T00:00:00Z'), end: new Date('2026-04-03T00:00:00Z') })));
    expect(await sleepBack.json()).toMatchObject({ stored: 1, ignored: 0 });

    expect(await pushTo(inbound(), garminDeregistration(garminUser))).toBe(200);
    const connections = await t.call('GET', `/v1/users/${userId}/connections`, { key: tenant.apiKey });
    expect((connections.json() as { data: { provider: string; status: string; health: { reason: string } }[] }).data).toEqual([
      expect.objectContaining({ provider: 'garmin', status: 'disconnected' }),
    ]);
    const after = await post(JSON.stringify(garminNotification(garminUser, 'activities', WINDOW)));
    expect(await after.json()).toMatchObject({ stored: 0, ignored: 1 });
  });
});

