import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fitbitSubscriptionId, subscribeUser, userSubscriptionsReactor, type SubscriptionDeps } from '../../src/processes/sync/userSubscriptions.js';
import { webhookToken } from '../../src/sources/shared/webhookSignatures.js';
import { WEBHOOK_APPLICATIONS_MAX_AGE_MS, WebhookApplications } from '../../src/server/webhookApplications.js';
import { ConnectionTokens } from '../../src/processes/sync/connectionTokens.js';
import { providerDescriptor } from '../../src/sources/registry.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { readOuraUserId } from '../../src/sources/providers/oura/userId.js';
import { readWhoopUserId } from '../../src/sources/providers/whoop/userId.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import type { Sandbox } from '../../src/sandbox/sandboxServer.js';
import { connectBeforeRetirement, connectedProviderUser, connectThroughSandbox, type SandboxedApp, startSandboxedApp } from '../connections/consentFlow.js';
import { expectStatus, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * Provider webhooks of the pull providers over HTTP (issue 11 item 5: `notification` runs from
 * provider webhooks, with data_type; docs/connections.md "Provider webhooks"): a user connects
 * each provider through the sandbox, then signed deliveries shaped as each provider documents
 * them queue one notification run each. The worker does not poll, so runs stay queued.
 */
const PROVIDERS = ['oura', 'whoop', 'withings', 'fitbit', 'strava', 'google'] as const;
type Slug = (typeof PROVIDERS)[number];
const VERIFY_CODE = 'fitbit-subscriber-code-0123';
const NOW = new Date('2026-03-28T10:15:00Z');
const secret = (p: Slug) => SANDBOX_CLIENTS[p]!.secret;

let world: SandboxedApp;
let sandbox: Sandbox;
let t: TestApp;
let base: string;
let tenant: TenantHandle;
let other: TenantHandle;
let userId: string;
let otherUserId: string;
const providerUser: Partial<Record<Slug, string>> = {};

type Delivery = { url: string; headers: Record<string, string>; body: string };

/** A delivery as the provider sends it, signed with `key` (the application's client secret unless told). */
function delivery(p: Slug, user: string, n: number, key = secret(p)): Delivery {
  const ts = String(NOW.getTime());
  switch (p) {
    case 'oura': {
      const body = JSON.stringify({ event_type: 'update', data_type: 'daily_sleep', object_id: `obj-${n}`, event_time: '2026-03-28T07:00:00+00:00', user_id: user });
      return { url: '/webhooks/oura', headers: { 'content-type': 'application/json', 'x-oura-timestamp': ts, 'x-oura-signature': createHmac('sha256', key).update(ts + body).digest('hex').toUpperCase() }, body };
    }
    case 'whoop': {
      const body = JSON.stringify({ user_id: Number(user), id: `5b2d-${n}`, type: 'recovery.updated', trace_id: `trace-${n}` });
      return { url: '/webhooks/whoop', headers: { 'content-type': 'application/json', 'x-whoop-signature-timestamp': ts, 'x-whoop-signature': createHmac('sha256', key).update(ts + body).digest('base64') }, body };
    }
    case 'fitbit': {
      const body = JSON.stringify([{ collectionType: 'sleep', date: `2026-03-2${n}`, ownerId: user, ownerType: 'user', subscriptionId: 'sub-1' }]);
      return { url: '/webhooks/fitbit', headers: { 'content-type': 'application/json', 'x-fitbit-signature': createHmac('sha1', `${key}&`).update(body).digest('base64') }, body };
    }
    case 'withings': {
      const start = Math.floor(NOW.getTime() / 1000) - 7200 - n;
      const body = new URLSearchParams({ userid: user, appli: '1', startdate: String(start), enddate: String(start + 60) }).toString();
      return { url: `/webhooks/withings/${webhookToken('withings', key)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body };
    }
    case 'strava': {
      const body = JSON.stringify({ object_type: 'activity', object_id: 1000 + n, aspect_type: 'create', updates: {}, owner_id: Number(user), subscription_id: 120475, event_time: Math.floor(NOW.getTime() / 1000) - 600 });
      return { url: `/webhooks/strava/${webhookToken('strava', key)}`, headers: { 'content-type': 'application/json' }, body };
    }
    case 'google': {
      const body = JSON.stringify({ healthUserId: user, dataType: 'steps', interval: { startTime: '2026-03-28T06:00:00Z', endTime: `2026-03-28T0${6 + n}:30:00Z` } });
      return { url: '/webhooks/google', headers: { 'content-type': 'application/json', authorization: webhookToken('google', key) }, body };
    }
  }
}

const EXPECTED_TYPE: Record<Slug, string> = { oura: 'daily_sleep', whoop: 'recovery', fitbit: 'sleep', withings: 'measure', strava: 'activities', google: 'steps' };

const send = (d: Delivery) => t.app.inject({ method: 'POST', url: d.url, headers: d.headers, payload: d.body });

async function notificationRuns(user = userId, key = tenant.apiKey) {
  const res = await t.call('GET', `/v1/users/${user}/sync-runs`, { key, query: { limit: '1000' } });
  expectStatus(res, 200);
  return (res.json() as { data: { trigger: string; provider: string; data_type: string | null; status: string; window_start: string; window_end: string }[] }).data.filter((r) => r.trigger === 'notification');
}

beforeAll(async () => {
  world = await startSandboxedApp(PROVIDERS, { FITBIT_SUBSCRIBER_VERIFICATION_CODE: VERIFY_CODE }, { syncPolling: false, syncClock: () => NOW });
  ({ sandbox, t, base } = world);
  tenant = await t.createTenant('webhooks-a');
  other = await t.createTenant('webhooks-b');
  userId = (await t.createUser(tenant.apiKey)).id;
  otherUserId = (await t.createUser(other.apiKey)).id;
  for (const p of PROVIDERS) providerUser[p] = await connectedProviderUser(t, tenant.apiKey, userId, p, tenant.id);
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe('provider webhooks queue notification runs (issue 11 item 5)', () => {
  it('Oura and WHOOP connections know the provider user id read after the code exchange (personal_info id, profile user_id)', () => {
    expect(providerUser.oura).toMatch(/^[0-9a-f-]{36}$/);
    expect(providerUser.whoop).toMatch(/^\d+$/);
  });

  it('reading the Oura or WHOOP user id is best effort: a refused call answers none, so the consent does not fail for it', async () => {
    expect(await readOuraUserId({ baseUrl: sandbox.urls.oura!, accessToken: 'not-a-token' })).toBeNull();
    expect(await readWhoopUserId({ baseUrl: sandbox.urls.whoop!, accessToken: 'not-a-token' })).toBeNull();
    expect(await readOuraUserId({ baseUrl: 'http://127.0.0.1:9', accessToken: 'x' })).toBeNull();
  });

  for (const p of PROVIDERS) {
    it(`${p}: a verified delivery queues exactly one notification run of its data type, visible in GET …/sync-runs; a repeat queues nothing more`, async () => {
      const before = (await notificationRuns()).filter((r) => r.provider === p).length;
      const d = delivery(p, providerUser[p]!, 1);
      const first = await send(d);
      expect(first.statusCode, first.body).toBe(p === 'fitbit' ? 204 : 200);
      if (p !== 'fitbit') expect(first.json()).toEqual({ queued: 1, repeated: 0, ignored: 0, disconnected: 0 });
      const runs = (await notificationRuns()).filter((r) => r.provider === p);
      expect(runs).toHaveLength(before + 1);
      expect(runs[0]).toMatchObject({ data_type: EXPECTED_TYPE[p], status: 'queued' });
      expect(Date.parse(runs[0]!.window_end)).toBeLessThanOrEqual(NOW.getTime());
      expect(Date.parse(runs[0]!.window_start)).toBeLessThan(Date.parse(runs[0]!.window_end));

      const again = await send(d);
      expect(again.statusCode).toBe(p === 'fitbit' ? 204 : 200);
      if (p !== 'fitbit') expect(again.json()).toMatchObject({ queued: 0, repeated: 1 });
      expect((await notificationRuns()).filter((r) => r.provider === p)).toHaveLength(before + 1);
    });

    it(`${p}: a delivery not signed by a known application is 401 and queues nothing`, async () => {
      const before = (await notificationRuns()).length;
      const res = await send(delivery(p, providerUser[p]!, 2, 'not-the-client-secret'));
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect((await notificationRuns()).length).toBe(before);
    });

    it(`${p}: a delivery naming a provider user no connection has is acknowledged and queues nothing`, async () => {
      const before = (await notificationRuns()).length;
      const res = await send(delivery(p, p === 'oura' ? '00000000-0000-4000-8000-000000000000' : '987654321', 3));
      expect(res.statusCode).toBeLessThan(300);
      if (p !== 'fitbit') expect(res.json()).toMatchObject({ queued: 0, ignored: 1 });
      expect((await notificationRuns()).length).toBe(before);
    });
  }

  it("google: the subscriber endpoint's verification answers 201 with the application's secret and 401 without it (issue 22)", async () => {
    const body = '{"type":"verification"}';
    const signed = await send({ url: '/webhooks/google', headers: { 'content-type': 'application/json', authorization: webhookToken('google', secret('google')) }, body });
    expect(signed.statusCode).toBe(201);
    const unsigned = await send({ url: '/webhooks/google', headers: { 'content-type': 'application/json' }, body });
    expect(unsigned.statusCode).toBe(401);
  });

  it('a verified delivery that is not the provider’s shape is 400 and queues nothing', async () => {
    const before = (await notificationRuns()).length;
    const ts = String(NOW.getTime());
    const sign = (algo: 'sha1' | 'sha256', key: string, msg: string, enc: 'hex' | 'base64') => createHmac(algo, key).update(msg).digest(enc);
    const bad: Delivery[] = [
      { url: '/webhooks/oura', headers: { 'content-type': 'application/json', 'x-oura-timestamp': ts, 'x-oura-signature': sign('sha256', secret('oura'), `${ts}{"user_id":"x"}`, 'hex') }, body: '{"user_id":"x"}' },
      { url: '/webhooks/whoop', headers: { 'content-type': 'application/json', 'x-whoop-signature-timestamp': ts, 'x-whoop-signature': sign('sha256', secret('whoop'), `${ts}not json`, 'base64') }, body: 'not json' },
      { url: '/webhooks/fitbit', headers: { 'content-type': 'application/json', 'x-fitbit-signature': sign('sha1', `${secret('fitbit')}&`, '[{"collectionType":"sleep","date":"yesterday","ownerId":"ABC"}]', 'base64') }, body: '[{"collectionType":"sleep","date":"yesterday","ownerId":"ABC"}]' },
      { url: `/webhooks/withings/${webhookToken('withings', secret('withings'))}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'userid=1&appli=one' },
      { url: `/webhooks/strava/${webhookToken('strava', secret('strava'))}`, headers: { 'content-type': 'application/json' }, body: '{"object_type":"activity"}' },
      { url: '/webhooks/google', headers: { 'content-type': 'application/json', authorization: webhookToken('google', secret('google')) }, body: '{"healthUserId":"x","dataType":"steps","interval":{"startTime":"later","endTime":"sooner"}}' },
    ];
    for (const d of bad) {
      const res = await send(d);
      expect(res.statusCode, d.url).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    expect((await notificationRuns()).length).toBe(before);
  });

  it('a delivery signed by another tenant’s own application is verified but reaches only connections made with that application: this tenant’s user gets nothing', async () => {
    const otherSecret = 'another-tenants-whoop-secret';
    expectStatus(await t.call('PUT', `/v1/admin/tenants/${other.id}/providers/whoop/keys`, { key: t.adminKey, body: { keys: { CLIENT_ID: '0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d', CLIENT_SECRET: otherSecret } } }), 200);
    const before = (await notificationRuns()).length;
    const res = await send(delivery('whoop', providerUser.whoop!, 11, otherSecret));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ queued: 0, repeated: 0, ignored: 1, disconnected: 0 });
    expect((await notificationRuns()).length).toBe(before);
    // The instance's application still verifies its own deliveries.
    expect((await send(delivery('whoop', providerUser.whoop!, 12))).json()).toMatchObject({ queued: 1 });
  });

  it('WHOOP *.deleted queues a run of its data type (deletions are not propagated, the data type is pulled again)', async () => {
    const body = JSON.stringify({ user_id: Number(providerUser.whoop), id: 'w-9', type: 'workout.deleted', trace_id: 'trace-deleted' });
    const ts = String(NOW.getTime());
    const res = await send({ url: '/webhooks/whoop', headers: { 'content-type': 'application/json', 'x-whoop-signature-timestamp': ts, 'x-whoop-signature': createHmac('sha256', secret('whoop')).update(ts + body).digest('base64') }, body });
    expect(res.json()).toMatchObject({ queued: 1 });
    expect((await notificationRuns()).find((r) => r.provider === 'whoop' && r.data_type === 'workout')).toBeTruthy();
  });

  it('another tenant never sees the runs a notification queued for this tenant’s user (404 for the user)', async () => {
    const res = await t.call('GET', `/v1/users/${userId}/sync-runs`, { key: other.apiKey });
    expect(res.statusCode).toBe(404);
    expect(await notificationRuns(otherUserId, other.apiKey)).toHaveLength(0);
  });

  describe('verification handshakes', () => {
    it('Strava echoes hub.challenge when hub.verify_token is the address’s token, 401 otherwise (over HTTP)', async () => {
      const token = webhookToken('strava', secret('strava'));
      const ok = await fetch(`${base}/webhooks/strava/${token}?hub.mode=subscribe&hub.challenge=15f7d1a91c1f40f8a748fd134752feb3&hub.verify_token=${token}`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ 'hub.challenge': '15f7d1a91c1f40f8a748fd134752feb3' });
      expect((await fetch(`${base}/webhooks/strava/${token}?hub.mode=subscribe&hub.challenge=x&hub.verify_token=wrong`)).status).toBe(401);
      expect((await fetch(`${base}/webhooks/strava/wrong-token?hub.mode=subscribe&hub.challenge=x&hub.verify_token=wrong-token`)).status).toBe(401);
    });

    it('Fitbit answers 204 to the subscriber verification code and 404 to any other', async () => {
      expect((await fetch(`${base}/webhooks/fitbit?verify=${VERIFY_CODE}`)).status).toBe(204);
      expect((await fetch(`${base}/webhooks/fitbit?verify=incorrect-code`)).status).toBe(404);
    });

    it('Oura echoes the challenge when verification_token is the application’s, 401 otherwise', async () => {
      const ok = await fetch(`${base}/webhooks/oura?verification_token=${webhookToken('oura', secret('oura'))}&challenge=abc123`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ challenge: 'abc123' });
      expect((await fetch(`${base}/webhooks/oura?verification_token=nope&challenge=abc123`)).status).toBe(401);
    });

    it('Withings’ check of the callback address (HEAD and GET) answers 200 for the application’s address, 401 for another', async () => {
      const url = `${base}/webhooks/withings/${webhookToken('withings', secret('withings'))}`;
      expect((await fetch(url, { method: 'HEAD' })).status).toBe(200);
      expect((await fetch(url)).status).toBe(200);
      expect((await fetch(`${base}/webhooks/withings/not-a-token`, { method: 'HEAD' })).status).toBe(401);
    });
  });

  it('Strava athlete deauthorization and Fitbit userRevokedAccess disconnect the connection (the provider as actor)', async () => {
    const strava = JSON.stringify({ object_type: 'athlete', object_id: Number(providerUser.strava), aspect_type: 'update', updates: { authorized: 'false' }, owner_id: Number(providerUser.strava), subscription_id: 120475, event_time: 1774692000 });
    const res = await send({ url: `/webhooks/strava/${webhookToken('strava', secret('strava'))}`, headers: { 'content-type': 'application/json' }, body: strava });
    expect(res.json()).toMatchObject({ disconnected: 1 });
    const fitbitBody = JSON.stringify([{ collectionType: 'userRevokedAccess', ownerId: providerUser.fitbit, ownerType: 'user', subscriptionId: 'sub-1' }]);
    const fb = await send({ url: '/webhooks/fitbit', headers: { 'content-type': 'application/json', 'x-fitbit-signature': createHmac('sha1', `${secret('fitbit')}&`).update(fitbitBody).digest('base64') }, body: fitbitBody });
    expect(fb.statusCode).toBe(204);
    const list = await t.call('GET', `/v1/users/${userId}/connections`, { key: tenant.apiKey });
    const status = Object.fromEntries((list.json() as { data: { provider: string; status: string }[] }).data.map((c) => [c.provider, c.status]));
    expect(status).toMatchObject({ strava: 'disconnected', fitbit: 'disconnected', oura: 'active' });
    // A disconnected connection takes no more notifications.
    const before = (await notificationRuns()).length;
    const later = await send(delivery('strava', providerUser.strava!, 7));
    expect(later.json()).toMatchObject({ queued: 0, ignored: 1 });
    expect((await notificationRuns()).length).toBe(before);
  });
});

describe('webhooks under hostile input (issue 20)', () => {
  const ouraKeys = (clientSecret: string) => ({ keys: { CLIENT_ID: 'SANDBOXOURAOWN', CLIENT_SECRET: clientSecret } });
  /** An Oura or WHOOP delivery signed with `key` over the timestamp `at` (ms, or seconds when told). */
  function signed(p: 'oura' | 'whoop', at: number, key = secret(p), unit: 'ms' | 's' = 'ms'): Delivery {
    const ts = String(unit === 's' ? Math.floor(at / 1000) : at);
    const d = delivery(p, providerUser[p]!, 40 + (at % 1000));
    const mac = createHmac('sha256', key).update(ts + d.body);
    return p === 'oura'
      ? { ...d, headers: { ...d.headers, 'x-oura-timestamp': ts, 'x-oura-signature': mac.digest('hex') } }
      : { ...d, headers: { ...d.headers, 'x-whoop-signature-timestamp': ts, 'x-whoop-signature': mac.digest('base64') } };
  }
  const opens = () => {
    const sealer = t.ctx.valueSealer;
    const open = sealer.open.bind(sealer);
    const calls = { n: 0 };
    sealer.open = (...args: Parameters<typeof open>) => {
      calls.n++;
      return open(...args);
    };
    return { calls, restore: () => (sealer.open = open) };
  };

  it('a delivery with a bad signature unseals no keys: each provider’s applications are opened once and kept', async () => {
    expectStatus(await t.call('PUT', `/v1/admin/tenants/${other.id}/providers/oura/keys`, { key: t.adminKey, body: ouraKeys('other-tenants-oura-secret') }), 200);
    const spy = opens();
    try {
      for (let i = 0; i < 20; i++) expect((await send(signed('oura', NOW.getTime(), `forged-${i}`))).statusCode).toBe(401);
      // The first delivery opened the tenant's two keys; the next nineteen opened nothing.
      expect(spy.calls.n).toBe(2);
      for (const p of PROVIDERS) expect((await send(delivery(p, providerUser[p]!, 30, 'forged'))).statusCode, p).toBe(401);
      expect((await fetch(`${base}/webhooks/strava/not-a-token?hub.mode=subscribe&hub.challenge=x&hub.verify_token=not-a-token`)).status).toBe(401);
      const afterEveryProvider = spy.calls.n;
      for (const p of PROVIDERS) expect((await send(delivery(p, providerUser[p]!, 31, 'forged'))).statusCode, p).toBe(401);
      expect(spy.calls.n).toBe(afterEveryProvider);
    } finally {
      spy.restore();
    }
  });

  it('a key change is honoured at once by the process that answered it: the new secret verifies, the old one no longer does', async () => {
    expectStatus(await t.call('PUT', `/v1/admin/tenants/${other.id}/providers/oura/keys`, { key: t.adminKey, body: ouraKeys('oura-secret-before') }), 200);
    expect((await send(signed('oura', NOW.getTime(), 'oura-secret-before'))).statusCode).toBe(200);
    expectStatus(await t.call('PUT', `/v1/admin/tenants/${other.id}/providers/oura/keys`, { key: t.adminKey, body: ouraKeys('oura-secret-after') }), 200);
    expect((await send(signed('oura', NOW.getTime(), 'oura-secret-before'))).statusCode).toBe(401);
    expect((await send(signed('oura', NOW.getTime(), 'oura-secret-after'))).statusCode).toBe(200);
    expectStatus(await t.call('DELETE', `/v1/admin/tenants/${other.id}/providers/oura/keys`, { key: t.adminKey }), 200);
    expect((await send(signed('oura', NOW.getTime(), 'oura-secret-after'))).statusCode).toBe(401);
  });

  it('another process, told nothing, sees a key change once its copy is 10 s old (spec: within 30 s), and reopens nothing while the keys did not change', async () => {
    let clock = Date.now();
    const elsewhere = new WebhookApplications({ readStore: t.ctx.readStore, sealer: t.ctx.valueSealer, providers: t.ctx.config.providers, now: () => clock });
    const secrets = async () => (await elsewhere.of('whoop')).map((a) => a.clientSecret);
    expectStatus(await t.call('PUT', `/v1/admin/tenants/${other.id}/providers/whoop/keys`, { key: t.adminKey, body: { keys: { CLIENT_ID: '0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d', CLIENT_SECRET: 'whoop-secret-one' } } }), 200);
    expect(await secrets()).toContain('whoop-secret-one');

    const spy = opens();
    try {
      clock += WEBHOOK_APPLICATIONS_MAX_AGE_MS + 1;
      expect(await secrets()).toContain('whoop-secret-one');
      expect(spy.calls.n).toBe(0);
    } finally {
      spy.restore();
    }

    expectStatus(await t.call('PUT', `/v1/admin/tenants/${other.id}/providers/whoop/keys`, { key: t.adminKey, body: { keys: { CLIENT_ID: '0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d', CLIENT_SECRET: 'whoop-secret-two' } } }), 200);
    clock += WEBHOOK_APPLICATIONS_MAX_AGE_MS - 1;
    expect(await secrets()).toContain('whoop-secret-one');
    clock += 2;
    expect(await secrets()).toEqual(expect.arrayContaining(['whoop-secret-two']));
    expect(await secrets()).not.toContain('whoop-secret-one');
  });

  for (const p of ['oura', 'whoop'] as const) {
    it(`${p}: a signature whose timestamp is more than 5 minutes from the clock is refused with 401, however well signed (a replay)`, async () => {
      const before = (await notificationRuns()).length;
      for (const at of [NOW.getTime() - 6 * 60_000, NOW.getTime() + 6 * 60_000, NOW.getTime() - 24 * 3_600_000]) {
        const res = await send(signed(p, at));
        expect(res.statusCode, new Date(at).toISOString()).toBe(401);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect((res.json() as { detail: string }).detail).toMatch(/5 minutes/);
      }
      // A delivery recorded when it was fresh, replayed a quarter of an hour later.
      const recorded = signed(p, NOW.getTime() - 15 * 60_000);
      expect((await send(recorded)).statusCode).toBe(401);
      for (const bad of ['', 'yesterday', '-1', '1.5e12']) {
        const d = signed(p, NOW.getTime());
        const name = p === 'oura' ? 'x-oura-timestamp' : 'x-whoop-signature-timestamp';
        expect((await send({ ...d, headers: { ...d.headers, [name]: bad } })).statusCode, bad).toBe(401);
      }
      expect((await notificationRuns()).length).toBe(before);
    });

    it(`${p}: a timestamp within 5 minutes, in milliseconds or seconds, is accepted`, async () => {
      for (const [at, unit] of [[NOW.getTime() - 4 * 60_000, 'ms'], [NOW.getTime() + 4 * 60_000, 's']] as const) {
        const res = await send(signed(p, at, secret(p), unit));
        expect(res.statusCode, `${at} ${unit}`).toBe(200);
      }
    });
  }
});

describe('per-user subscriptions (Fitbit, Withings) after a backfill', () => {
  const deps = (): SubscriptionDeps => ({ eventStore: t.ctx.eventStore, readStore: t.ctx.readStore, credentials: t.ctx.credentials, sealer: t.ctx.valueSealer, providers: t.ctx.config.providers, publicBaseUrl: t.ctx.config.publicBaseUrl, now: () => NOW });
  /** What the sandbox holds for the user, asked with the connection's own token as the provider's list call. */
  async function listed(p: 'fitbit' | 'withings', user: string): Promise<unknown[]> {
    const provider = providerDescriptor(p)!;
    const client = { clientId: SANDBOX_CLIENTS[p]!.id, clientSecret: secret(p), baseUrl: sandbox.urls[p]! };
    const token = await new ConnectionTokens({ eventStore: t.ctx.eventStore, credentials: t.ctx.credentials, sealer: t.ctx.valueSealer, provider, client, userId: user, now: () => NOW }).accessToken();
    const res =
      p === 'fitbit'
        ? await fetch(`${sandbox.urls.fitbit}/1/user/-/apiSubscriptions.json`, { headers: { authorization: `Bearer ${token}` } })
        : await fetch(`${sandbox.urls.withings}/notify`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: new URLSearchParams({ action: 'list' }) });
    const body = (await res.json()) as { apiSubscriptions?: unknown[]; body?: { profiles: unknown[] } };
    return body.apiSubscriptions ?? body.body!.profiles;
  }
  const synced = (provider: string, user: string, trigger: string) =>
    ({ type: 'connection_sync.synced', data: { tenant_id: tenant.id, user_id: user, provider, run_stream: 'r', trigger, window_end: NOW.toISOString(), initial_backfill: trigger === 'backfill', at: NOW.toISOString() } }) as unknown as RecordedEvent;

  it('a backfill’s success (not a scheduled pull’s) subscribes the Withings user to each category at the application’s webhook address, and the Fitbit user once; a replay makes no second subscription', async () => {
    const user = (await t.createUser(tenant.apiKey)).id;
    expect((await connectThroughSandbox(t, tenant.apiKey, user, 'withings')).callback.statusCode).toBe(200);
    // Fitbit is retired (contracts §14): a connection made before still has its subscription made.
    await connectBeforeRetirement(t, tenant.id, user, 'fitbit');
    const reactor = userSubscriptionsReactor(deps());
    await reactor.handle(synced('withings', user, 'scheduled'));
    expect(await listed('withings', user)).toHaveLength(0);
    for (let i = 0; i < 2; i++) {
      await reactor.handle(synced('withings', user, 'backfill'));
      await reactor.handle(synced('fitbit', user, 'backfill'));
    }
    const profiles = (await listed('withings', user)) as { appli: number; callbackurl: string }[];
    expect(profiles.map((x) => x.appli).sort((a, b) => a - b)).toEqual([1, 4, 16, 44]);
    expect(new Set(profiles.map((x) => x.callbackurl))).toEqual(new Set([`${t.ctx.config.publicBaseUrl}/webhooks/withings/${webhookToken('withings', secret('withings'))}`]));
    expect(await listed('fitbit', user)).toEqual([expect.objectContaining({ subscriptionId: fitbitSubscriptionId(user) })]);
  });

  it('a connection without a usable grant is not subscribed, and the reactor goes on without failing (best effort)', async () => {
    expect(await subscribeUser(deps(), { tenantId: tenant.id, userId: 'no-such-user', provider: 'withings' }).catch(() => -1)).toBe(-1);
    expect(await userSubscriptionsReactor(deps()).handle(synced('withings', 'no-such-user', 'backfill'))).toBeUndefined();
  });
});
