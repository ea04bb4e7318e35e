import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { expectStatus, startTestApp, type TestApp } from '../support/server.js';
import { Receiver } from '../webhooks/receiver.js';
import { connectThroughSandbox } from './consentFlow.js';

/**
 * contracts §8: connection.created, connection.needs_reauth, connection.disconnected and
 * connection.health_changed are delivered, signed, to the tenant's endpoints.
 */
let sandbox: Sandbox;
let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  sandbox = await startSandbox();
  receiver = await Receiver.start();
  t = await startTestApp({
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    OURA_BASE_URL: sandbox.urls.oura!,
    OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id,
    OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret,
  });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await sandbox?.close();
});

describe('connection webhook events (contracts §8)', () => {
  it('announces a new connection, needs_reauth with action reconnect, the reconnect as health_changed, and the disconnection', async () => {
    const tenant = await t.createTenant('conn-hooks');
    const created = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: receiver.url('/conn'), event_types: ['connection.created', 'connection.needs_reauth', 'connection.health_changed', 'connection.disconnected'] } });
    expectStatus(created, 201);
    receiver.trust('/conn', (created.json() as { secret: string }).secret);
    const user = await t.createUser(tenant.apiKey, { external_ref: 'hooked' });
    await connectThroughSandbox(t, tenant.apiKey, user.id, 'oura', { redirect_uri: 'https://app.example.com/cb' });
    // Keys naming another application send the connection back to consent.
    expectStatus(await t.call('PUT', `/v1/admin/tenants/${tenant.id}/providers/oura/keys`, { key: t.adminKey, body: { keys: { CLIENT_ID: 'OTHERAPPLICATION', CLIENT_SECRET: 'x' } } }), 200);
    expectStatus(await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/providers/oura/keys`, { key: t.adminKey }), 200);
    await connectThroughSandbox(t, tenant.apiKey, user.id, 'oura', { redirect_uri: 'https://app.example.com/cb' });
    expectStatus(await t.call('DELETE', `/v1/users/${user.id}/connections/oura`, { key: tenant.apiKey }), 204);

    await receiver.waitFor((all) => all.filter((r) => r.path === '/conn').length >= 4);
    const events = receiver.at('/conn').map((r) => r.verified as { type: string; data: Record<string, unknown> });
    expect(events.every((e) => e !== null)).toBe(true);
    const byType = Object.fromEntries(events.map((e) => [e.type, e.data]));
    expect(byType['connection.created']).toMatchObject({ user_id: user.id, external_ref: 'hooked', provider: 'oura' });
    expect(byType['connection.needs_reauth']).toMatchObject({ user_id: user.id, provider: 'oura', reason: 'provider_keys_changed', action: 'reconnect' });
    expect(byType['connection.health_changed']).toMatchObject({ user_id: user.id, provider: 'oura', reason: 'reconnected' });
    expect(byType['connection.disconnected']).toMatchObject({ user_id: user.id, provider: 'oura', reason: 'disconnected by the tenant' });
  });
});
