import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PULL_CONNECTORS, PUSH_CONNECTORS } from '../../src/sources/registry.js';
import { garminDeregistration, garminNotification, pushTo } from '../../src/sandbox/data/garmin.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../src/sandbox/sandboxSettings.js';
import { allPages } from '../server/records/recordsHelper.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { eventually, Receiver } from '../webhooks/receiver.js';
import { connectedProvider } from '../../src/catalog/providers.js';
import { connectBeforeRetirement, connectThroughSandbox, drainSync, normalised, providerUserIdOf } from './consentFlow.js';

/**
 * Issue 11's acceptance, for every connector this build registers: a user connects to the
 * sandbox provider over HTTP, the backfill pulls (or the provider pushes), the normalised records
 * read back through the read routes; then the provider refuses, and the connection shows
 * needs_reauth with action reconnect and a `connection.needs_reauth` webhook is delivered; then
 * the user reconnects and a sync succeeds again. Only the sandbox is called; nothing needs the
 * internet.
 */
// A retired provider cannot be connected (contracts §14): its connections are walked below.
const PULLED = Object.keys(PULL_CONNECTORS)
  .filter((p) => !connectedProvider(p)?.retirement)
  .sort();
const PUSHED = Object.keys(PUSH_CONNECTORS).sort();
const INBOUND_SECRET = 'acceptance-inbound-secret-0123456789';

type Run = { id: number; trigger: string; status: string; objects_stored: number | null; error: string | null };
type Conn = { provider: string; status: string; last_sync_at: string | null; initial_backfill_at: string | null; health: { healthy: boolean; reason: string | null; action: string | null } };
type Hook = { type: string; data: { user_id: string; provider: string; action?: string } };

let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;
let receiver: Receiver;
let base: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  receiver = await Receiver.start();
  const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', GARMIN_INBOUND_SECRET: INBOUND_SECRET, ...sandboxSettings(sandbox) };
  // The engine runs when the test says (runDue), on the real clock.
  t = await startTestApp(env, { syncPolling: false });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  tenant = await t.createTenant('acceptance');
  const hook = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: receiver.url('/acceptance'), event_types: ['connection.needs_reauth', 'connection.disconnected', 'sync.failed'] } });
  expectStatus(hook, 201);
  receiver.trust('/acceptance', (hook.json() as { secret: string }).secret);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await sandbox?.close();
});

const runsOf = async (userId: string) => {
  const res = await t.call('GET', `/v1/users/${userId}/sync-runs`, { key: tenant.apiKey });
  expectStatus(res, 200);
  return (res.json() as { data: Run[] }).data;
};
const connectionOf = async (userId: string, provider: string) => {
  const res = await t.call('GET', `/v1/users/${userId}/connections`, { key: tenant.apiKey });
  expectStatus(res, 200);
  return (res.json() as { data: Conn[] }).data.find((c) => c.provider === provider)!;
};
/**
 * The user's records of the provider through the read routes: sleep, workouts, daily summaries,
 * and the samples of every quantity type coverage names for it.
 */
async function recordsRead(userId: string, provider: string, start: Date, end: Date): Promise<Record<string, unknown>[]> {
  const range = { start: start.toISOString(), end: end.toISOString(), view: 'all' };
  const list = async (path: string, query: Record<string, string> = {}) =>
    (await allPages<Record<string, unknown>>(t, tenant.apiKey, `/v1/users/${userId}/${path}`, { ...range, ...query })).flatMap((p) => p.data);
  const coverage = await t.call('GET', `/v1/users/${userId}/coverage`, { key: tenant.apiKey, query: { provider, start: range.start, end: range.end } });
  expectStatus(coverage, 200);
  const metrics = new Set((coverage.json() as { days: { metrics: Record<string, number> }[] }).days.flatMap((d) => Object.keys(d.metrics)));
  const records = [...(await list('sleep')), ...(await list('workouts')), ...(await list('daily'))];
  for (const type of [...metrics].slice(0, 6)) {
    const res = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { ...range, type, limit: '1000' } });
    if (res.statusCode === 200) records.push(...(res.json() as { data: Record<string, unknown>[] }).data);
  }
  return records;
}

const hooksFor = (userId: string, type: string) =>
  receiver
    .at('/acceptance')
    .map((r) => r.verified as Hook | null)
    .filter((h): h is Hook => h !== null && h.type === type && h.data.user_id === userId);

describe('every pull connector, connect → backfill → read → refusal → reconnect (issue 11 acceptance)', () => {
  it('registers pull connectors', () => {
    expect(PULLED.length).toBeGreaterThan(0);
  });

  it.each(PULLED)('%s', async (provider) => {
    const user = await t.createUser(tenant.apiKey, { external_ref: `acceptance-${provider}` });
    const { callback } = await connectThroughSandbox(t, tenant.apiKey, user.id, provider);
    expect(callback.statusCode).toBe(200);
    expect((await connectionOf(user.id, provider)).status).toBe('active');

    // The backfill queued on connect pulls the sandbox and stores its payloads.
    await eventually(async () => {
      await t.ctx.settle();
      return (await runsOf(user.id)).some((r) => r.trigger === 'backfill');
    });
    await drainSync(t);
    const [backfill] = await runsOf(user.id);
    expect(backfill, JSON.stringify(backfill)).toMatchObject({ trigger: 'backfill', status: 'succeeded' });
    expect(backfill!.objects_stored).toBeGreaterThan(0);
    const synced = await connectionOf(user.id, provider);
    expect(synced.last_sync_at).not.toBeNull();
    expect(synced.initial_backfill_at).not.toBeNull();
    expect(synced.health).toMatchObject({ healthy: true, action: null });

    // The normalised records read back, every one of this provider.
    await normalised(t, tenant.apiKey, user.id);
    const now = new Date();
    const records = await recordsRead(user.id, provider, new Date(now.getTime() - 32 * 86_400_000), new Date(now.getTime() + 86_400_000));
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.provider === provider)).toBe(true);

    // The provider refuses: the next pull fails, the connection needs the user again.
    sandbox.revokeConsent(provider);
    expectStatus(await t.call('POST', `/v1/users/${user.id}/connections/${provider}/sync`, { key: tenant.apiKey }), 202);
    await drainSync(t);
    const [refusedRun] = await runsOf(user.id);
    expect(refusedRun).toMatchObject({ trigger: 'manual', status: 'failed' });
    const refused = await connectionOf(user.id, provider);
    expect(refused.status).toBe('needs_reauth');
    expect(refused.health).toMatchObject({ healthy: false, action: 'reconnect' });
    await receiver.waitFor(() => hooksFor(user.id, 'connection.needs_reauth').length > 0, 20_000);
    expect(hooksFor(user.id, 'connection.needs_reauth')[0]!.data).toMatchObject({ provider, action: 'reconnect' });
    expect((await t.call('POST', `/v1/users/${user.id}/connections/${provider}/sync`, { key: tenant.apiKey })).statusCode).toBe(409);

    // The user consents again: the connection syncs again.
    await connectThroughSandbox(t, tenant.apiKey, user.id, provider);
    expect((await connectionOf(user.id, provider)).status).toBe('active');
    await eventually(async () => {
      await t.ctx.settle();
      return (await runsOf(user.id)).filter((r) => r.trigger === 'backfill').length === 2;
    });
    await drainSync(t);
    const again = await t.call('POST', `/v1/users/${user.id}/connections/${provider}/sync`, { key: tenant.apiKey });
    expectStatus(again, 202);
    await drainSync(t);
    const latest = await runsOf(user.id);
    expect(latest.slice(0, 2).map((r) => [r.trigger, r.status])).toEqual([
      ['manual', 'succeeded'],
      ['backfill', 'succeeded'],
    ]);
    expect((await connectionOf(user.id, provider)).health).toMatchObject({ healthy: true, action: null });
  }, 240_000);
});

describe('every push connector, connect → push → read → withdrawal → reconnect (issue 11 acceptance)', () => {
  // The push walk-through speaks Garmin's notifications: a new push connector must join it here.
  it('covers every push connector', () => {
    expect(PUSHED).toEqual(['garmin']);
  });

  it.each(PUSHED)('%s', async (provider) => {
    const user = await t.createUser(tenant.apiKey, { external_ref: `acceptance-${provider}` });
    const inbound = `${base}/inbound/${provider}/${INBOUND_SECRET}`;
    // The partner's address, as registered in the provider's portal: where its pushes go.
    sandbox.registerPush(provider, inbound);
    const { callback } = await connectThroughSandbox(t, tenant.apiKey, user.id, provider);
    expect(callback.statusCode).toBe(200);
    const providerUser = (await providerUserIdOf(t, user.id, provider))!;
    const day = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 2 * 86_400_000);
    const window = { start: day, end: new Date(day.getTime() + 86_400_000) };
    const notifications = async () => (await runsOf(user.id)).filter((r) => r.trigger === 'notification');

    // The backfill on connect asks the provider for the history, which it pushes like new data.
    await eventually(async () => {
      await t.ctx.settle();
      return (await runsOf(user.id)).some((r) => r.trigger === 'backfill');
    });
    await drainSync(t);
    expect((await runsOf(user.id)).find((r) => r.trigger === 'backfill')).toMatchObject({ status: 'succeeded', objects_stored: 0 });
    const history = await eventually(async () => {
      await t.ctx.settle();
      // Every summary type with data in the window arrives as its own push, each a run stored whole.
      const pushed = await notifications();
      return pushed.length >= 5 && pushed.every((r) => r.status !== 'running') ? pushed : null;
    }, 60_000);
    expect(history.every((r) => r.status === 'succeeded' && (r.objects_stored ?? 0) > 0)).toBe(true);

    for (const type of ['dailies', 'sleeps'] as const) expect(await pushTo(inbound, garminNotification(providerUser, type, window))).toBe(200);
    await t.ctx.settle();
    const runs = await notifications();
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((r) => r.status === 'succeeded' && (r.objects_stored ?? 0) > 0)).toBe(true);
    await normalised(t, tenant.apiKey, user.id);
    const records = await recordsRead(user.id, provider, new Date(day.getTime() - 86_400_000), new Date(day.getTime() + 2 * 86_400_000));
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.provider === provider)).toBe(true);

    // The user withdraws at the provider: the connection ends and the caller is told.
    expect(await pushTo(inbound, garminDeregistration(providerUser))).toBe(200);
    await t.ctx.settle();
    expect((await connectionOf(user.id, provider)).health).toMatchObject({ healthy: false, action: 'reconnect' });
    await receiver.waitFor(() => hooksFor(user.id, 'connection.disconnected').length > 0, 20_000);

    // Reconnected, pushes are stored again.
    await connectThroughSandbox(t, tenant.apiKey, user.id, provider);
    const before = (await notifications()).length;
    const next = { start: window.end, end: new Date(window.end.getTime() + 86_400_000) };
    expect(await pushTo(inbound, garminNotification(providerUser, 'dailies', next))).toBe(200);
    await t.ctx.settle();
    const after = await notifications();
    expect(after.length).toBeGreaterThan(before);
    expect(after[0]).toMatchObject({ trigger: 'notification', status: 'succeeded' });
  }, 120_000);
});

describe('a retired provider (contracts §14, issue 22)', () => {
  it('fitbit: connecting is 409 naming google; a connection made before meets 410 and ends needs_reauth/provider_retired with the webhook, freshness naming the successor, its data kept', async () => {
    const user = await t.createUser(tenant.apiKey, { external_ref: 'acceptance-fitbit-retired' });
    const refused = await t.call('POST', `/v1/users/${user.id}/connections/fitbit`, { key: tenant.apiKey, body: {} });
    expectStatus(refused, 409);
    expect((refused.json() as { detail: string }).detail).toMatch(/google/);

    // A connection from before the retirement, with its history stored.
    await connectBeforeRetirement(t, tenant.id, user.id, 'fitbit');
    await eventually(async () => {
      await t.ctx.settle();
      return (await runsOf(user.id)).some((r) => r.trigger === 'backfill');
    });
    await drainSync(t);
    await normalised(t, tenant.apiKey, user.id);
    const now = new Date();
    const span = [new Date(now.getTime() - 32 * 86_400_000), new Date(now.getTime() + 86_400_000)] as const;
    const before = await recordsRead(user.id, 'fitbit', ...span);
    expect(before.length).toBeGreaterThan(0);

    // Fitbit turns its API down: every call answers 410 Gone.
    sandbox.retire('fitbit');
    try {
      expectStatus(await t.call('POST', `/v1/users/${user.id}/connections/fitbit/sync`, { key: tenant.apiKey }), 202);
      await drainSync(t);
      const [run] = await runsOf(user.id);
      expect(run).toMatchObject({ trigger: 'manual', status: 'failed' });
      expect(run!.error).toMatch(/410/);
      const conn = await connectionOf(user.id, 'fitbit');
      expect(conn.status).toBe('needs_reauth');
      expect(conn.health).toMatchObject({ healthy: false, reason: 'provider_retired', action: 'reconnect' });
      const freshness = await t.call('GET', `/v1/users/${user.id}/freshness`, { key: tenant.apiKey });
      expectStatus(freshness, 200);
      const entry = (freshness.json() as { data: { provider: string; state: string; last_error: string | null }[] }).data.find((f) => f.provider === 'fitbit')!;
      expect(entry).toMatchObject({ state: 'needs_reauth' });
      expect(entry.last_error).toMatch(/google/);
      await receiver.waitFor(() => hooksFor(user.id, 'connection.needs_reauth').length > 0, 20_000);
      expect(hooksFor(user.id, 'connection.needs_reauth')[0]!.data).toMatchObject({ provider: 'fitbit', action: 'reconnect' });
      // Stored data stays.
      expect((await recordsRead(user.id, 'fitbit', ...span)).length).toBe(before.length);
    } finally {
      sandbox.retire('fitbit', false);
    }
  }, 120_000);
});
