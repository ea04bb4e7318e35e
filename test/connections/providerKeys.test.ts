import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * Spec "Tenant provider keys" and its state table, contracts §7: admin GET/PUT/DELETE
 * /v1/admin/tenants/{tenant_id}/providers/{provider}/keys; GET /v1/providers.
 */

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

const STRAVA = { CLIENT_ID: '123456', CLIENT_SECRET: 'strava-secret-value-1' };
const keysUrl = (tenantId: string, provider: string) => `/v1/admin/tenants/${tenantId}/providers/${provider}/keys`;

beforeAll(async () => {
  // The instance has Oura keys of its own: Oura is enabled for every tenant.
  t = await startTestApp({ OURA_CLIENT_ID: 'instance-oura', OURA_CLIENT_SECRET: 'instance-oura-secret', PUBLIC_BASE_URL: 'https://health.example.com' });
  tenant = await t.createTenant('keys-a');
  other = await t.createTenant('keys-b');
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/providers (contracts §7)', () => {
  it('lists every slug with kind, and enables an oauth provider only with the instance or tenant keys', async () => {
    const res = await t.call('GET', '/v1/providers', { key: tenant.apiKey });
    expectStatus(res, 200);
    const data = (res.json() as { data: { slug: string; kind: string; enabled: boolean; name: string; data_types: string[] }[] }).data;
    expect(data.map((p) => p.slug).sort()).toEqual(['apple-health', 'device-a', 'device-b', 'device-c', 'dexcom', 'dexcom-clarity', 'fit', 'fitbit', 'fitbit-takeout', 'garmin', 'google', 'health-connect', 'oura', 'polar', 'samsung-health', 'strava', 'whoop', 'withings']);
    const by = Object.fromEntries(data.map((p) => [p.slug, p]));
    expect(by.oura).toMatchObject({ kind: 'oauth', enabled: true });
    expect(by.strava).toMatchObject({ kind: 'oauth', enabled: false });
    expect(by.garmin).toMatchObject({ kind: 'push', enabled: false });
    expect(by['device-a']).toMatchObject({ kind: 'device', enabled: true });
    // contracts §13: the native export formats are upload slugs of kind import.
    expect(by['apple-health']).toMatchObject({ kind: 'import', enabled: true, retired: false, history_days: null });
    expect(by.oura!.data_types.length).toBeGreaterThan(0);
  });

  it('every entry says whether it is retired, its successor, its history reach and notes (contracts §14, issue 22): fitbit retired for google, Garmin 30 and Polar 365 days', async () => {
    const res = await t.call('GET', '/v1/providers', { key: tenant.apiKey });
    expectStatus(res, 200);
    const data = (res.json() as { data: Record<string, unknown>[] }).data;
    for (const p of data) expect(Object.keys(p)).toEqual(expect.arrayContaining(['retired', 'successor', 'history_days', 'notes']));
    const by = Object.fromEntries(data.map((p) => [p.slug as string, p]));
    expect(by.fitbit).toMatchObject({ retired: true, successor: 'google' });
    expect(by.fitbit!.notes).toMatch(/410/);
    expect(by.google).toMatchObject({ retired: false, successor: null, kind: 'oauth' });
    expect(by.dexcom).toMatchObject({ retired: false, successor: null, kind: 'oauth' });
    expect(by.garmin).toMatchObject({ history_days: 30 });
    expect(by.polar).toMatchObject({ history_days: 365 });
    expect(by.strava!.notes).toMatch(/June 2026/);
    expect(by['device-a']).toMatchObject({ retired: false, successor: null, history_days: null, notes: null });
  });

  it('connecting a retired provider is 409 naming its successor, nothing is started; another tenant\'s user is 404 first', async () => {
    const user = await t.createUser(tenant.apiKey);
    const res = await t.call('POST', `/v1/users/${user.id}/connections/fitbit`, { key: tenant.apiKey, body: {} });
    expectProblem(res, 409);
    expect((res.json() as { detail: string }).detail).toMatch(/connect google/);
    expect((await t.call('GET', `/v1/users/${user.id}/connections`, { key: tenant.apiKey }).then((r) => r.json() as { data: unknown[] })).data).toEqual([]);
    expectProblem(await t.call('POST', `/v1/users/${user.id}/connections/fitbit`, { key: other.apiKey, body: {} }), 404);
  });

  it('needs the tenant key (an admin key is refused with 403)', async () => {
    expectStatus(await t.call('GET', '/v1/providers'), 401);
    expectProblem(await t.call('GET', '/v1/providers', { key: t.adminKey }), 403);
  });
});

describe('tenant provider keys (spec "Tenant provider keys")', () => {
  it('answers not_set before any PUT, with the instance addresses to register', async () => {
    const res = await t.call('GET', keysUrl(tenant.id, 'strava'), { key: t.adminKey });
    expectStatus(res, 200);
    expect(res.json()).toMatchObject({
      provider: 'strava',
      set: false,
      status: 'not_set',
      error: null,
      client_id: null,
      urls: { redirect: 'https://health.example.com/oauth/strava/callback', inbound: 'https://health.example.com/webhooks/strava' },
      created_at: null,
    });
  });

  it('stores valid keys sealed: active, client_id masked, values never served, the provider enabled for that tenant only', async () => {
    const res = await t.call('PUT', keysUrl(tenant.id, 'strava'), { key: t.adminKey, body: { keys: STRAVA } });
    expectStatus(res, 200);
    const body = res.json() as Record<string, unknown>;
    expect(body).toMatchObject({ set: true, status: 'active', client_id: '1…6', reauth_required: 0 });
    expect(res.headers.location).toBe(keysUrl(tenant.id, 'strava'));
    expect(JSON.stringify(body)).not.toContain(STRAVA.CLIENT_SECRET);
    expect(body.keys).toEqual([
      { name: 'CLIENT_ID', required: true, secret: false, set: true },
      { name: 'CLIENT_SECRET', required: true, secret: true, set: true },
    ]);
    const got = await t.call('GET', keysUrl(tenant.id, 'strava'), { key: t.adminKey });
    expect(got.body).not.toContain(STRAVA.CLIENT_SECRET);
    expect(got.json()).not.toHaveProperty('reauth_required');
    const events = await t.ctx.eventStore.readStream(`provider-keys-${tenant.id}-strava`);
    expect(JSON.stringify(events)).not.toContain(STRAVA.CLIENT_SECRET);

    const mine = (await t.call('GET', '/v1/providers', { key: tenant.apiKey })).json() as { data: { slug: string; enabled: boolean }[] };
    const theirs = (await t.call('GET', '/v1/providers', { key: other.apiKey })).json() as { data: { slug: string; enabled: boolean }[] };
    expect(mine.data.find((p) => p.slug === 'strava')!.enabled).toBe(true);
    expect(theirs.data.find((p) => p.slug === 'strava')!.enabled).toBe(false);
  });

  it('refuses missing required keys with 400 and keys the provider would refuse with 422, storing nothing', async () => {
    expect(expectProblem(await t.call('PUT', keysUrl(other.id, 'whoop'), { key: t.adminKey, body: { keys: { CLIENT_ID: '8c0a4c3e-5f1b-4c52-9f3e-0a1b2c3d4e5f' } } }), 400).detail).toMatch(/CLIENT_SECRET/);
    expect(expectProblem(await t.call('PUT', keysUrl(other.id, 'whoop'), { key: t.adminKey, body: { keys: { ...STRAVA, COLOUR: 'x' } } }), 400).detail).toMatch(/COLOUR/);
    expect(expectProblem(await t.call('PUT', keysUrl(other.id, 'whoop'), { key: t.adminKey, body: { keys: { CLIENT_ID: 'not-a-uuid', CLIENT_SECRET: 's' } } }), 422).detail).toMatch(/UUID/);
    expectProblem(await t.call('PUT', keysUrl(other.id, 'whoop'), { key: t.adminKey, body: {} }), 400);
    const res = await t.call('GET', keysUrl(other.id, 'whoop'), { key: t.adminKey });
    expect(res.json()).toMatchObject({ status: 'not_set', set: false });
  });

  it('DELETE answers 200 with the not_set resource and reauth_required', async () => {
    expectStatus(await t.call('PUT', keysUrl(other.id, 'fitbit'), { key: t.adminKey, body: { keys: { CLIENT_ID: '22ABCD', CLIENT_SECRET: 'fitbit-secret' } } }), 200);
    const res = await t.call('DELETE', keysUrl(other.id, 'fitbit'), { key: t.adminKey });
    expectStatus(res, 200);
    expect(res.json()).toMatchObject({ status: 'not_set', set: false, client_id: null, reauth_required: 0 });
  });

  it('is an admin route: a tenant key gets 403; an unknown tenant or provider 404', async () => {
    expectProblem(await t.call('GET', keysUrl(tenant.id, 'strava'), { key: tenant.apiKey }), 403);
    expectProblem(await t.call('GET', keysUrl('00000000-0000-4000-8000-000000000000', 'strava'), { key: t.adminKey }), 404);
    expectProblem(await t.call('GET', keysUrl(tenant.id, 'device-a'), { key: t.adminKey }), 404);
    expectProblem(await t.call('PUT', keysUrl(tenant.id, 'nope'), { key: t.adminKey, body: { keys: STRAVA } }), 404);
  });

  it('keys that no longer open with the SEALING_KEY are in error and disable the provider for the tenant', async () => {
    const doc = (await t.ctx.readStore.get('provider_keys', `${tenant.id}:strava`))!;
    const sealed = doc.sealed_values as Record<string, string>;
    await t.ctx.readStore.applyChanges([{ op: 'update', collection: 'provider_keys', id: doc._id, set: { sealed_values: { ...sealed, CLIENT_SECRET: sealed.CLIENT_SECRET!.replace(/^(s2\.[^.]+\.)(.)/, (_m, head: string, c: string) => `${head}${c === 'A' ? 'B' : 'A'}`) } } }]);
    const res = await t.call('GET', keysUrl(tenant.id, 'strava'), { key: t.adminKey });
    expect(res.json()).toMatchObject({ status: 'error', set: true });
    expect((res.json() as { error: string }).error).toMatch(/SEALING_KEY/);
    const mine = (await t.call('GET', '/v1/providers', { key: tenant.apiKey })).json() as { data: { slug: string; enabled: boolean }[] };
    expect(mine.data.find((p) => p.slug === 'strava')!.enabled).toBe(false);
  });
});
