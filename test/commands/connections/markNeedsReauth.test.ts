import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionState, connectionStream } from '../../../commands/connections/connection.js';
import { markNeedsReauth } from '../../../commands/connections/markNeedsReauth.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { ConnectionTokens } from '../../../src/processes/sync/connectionTokens.js';
import { SANDBOX_CLIENTS } from '../../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/sandboxServer.js';
import { providerDescriptor } from '../../../src/sources/registry.js';
import { connectThroughSandbox } from '../../connections/consentFlow.js';
import { startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';

/**
 * Issue 36 §7 (the demo's restart: both reconnect backfills failed with invalid_token): a pull
 * that opened a connection's tokens before a reconnect, and had them refused after it, sent the
 * new grant to needs_reauth. A refusal marks the connection only while it holds the refused grant.
 */
let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  sandbox = await startSandbox();
  t = await startTestApp({ OURA_BASE_URL: sandbox.urls.oura!, OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id, OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret }, { syncPolling: false });
  tenant = await t.createTenant('refused-grant');
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

const grantOf = async (userId: string) => {
  const tokens = new ConnectionTokens({
    eventStore: t.ctx.eventStore,
    credentials: t.ctx.credentials,
    sealer: t.ctx.valueSealer,
    provider: providerDescriptor('oura')!,
    client: { clientId: SANDBOX_CLIENTS.oura!.id, clientSecret: SANDBOX_CLIENTS.oura!.secret, baseUrl: sandbox.urls.oura! },
    userId,
    now: () => new Date(),
  });
  await tokens.load();
  return tokens.grant()!;
};
const statusOf = async (userId: string) => (await loadState(t.ctx.eventStore, connectionStream(userId, 'oura'), connectionState)).state.status;

describe('a refusal marks only the grant that was refused (issue 36 §7)', () => {
  it('the old grant refused after a reconnect leaves the connection active; the current grant refused sends it to needs_reauth', { timeout: 60_000 }, async () => {
    const user = await t.createUser(tenant.apiKey);
    await connectThroughSandbox(t, tenant.apiKey, user.id, 'oura');
    const before = await grantOf(user.id);
    await connectThroughSandbox(t, tenant.apiKey, user.id, 'oura');
    const now = await grantOf(user.id);
    expect(now).not.toBe(before);
    const refused = { userId: user.id, provider: 'oura', reason: 'provider_refused', error: 'invalid_token', at: new Date().toISOString() };
    expect((await markNeedsReauth(t.ctx.eventStore, { ...refused, grant: before })).changed).toBe(false);
    expect(await statusOf(user.id)).toBe('active');
    expect((await markNeedsReauth(t.ctx.eventStore, { ...refused, grant: now })).changed).toBe(true);
    expect(await statusOf(user.id)).toBe('needs_reauth');
  });
});
