import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserHash } from '../../../commands/connections/bindConsent.js';
import { completeConsent } from '../../../commands/connections/completeConsent.js';
import { connectionState, connectionStream } from '../../../commands/connections/connection.js';
import { CREDENTIALS, type CredentialsDoc } from '../../../commands/connections/connectionCredentials.js';
import type { ProviderGrants, TokenSet } from '../../../commands/connections/providerGrants.js';
import { requestConsent, stateHash } from '../../../commands/connections/requestConsent.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { connectedProvider } from '../../../src/catalog/providers.js';
import { profileKeyRef } from '../../../src/crypto/personalSealing.js';
import { ConnectionTokens, NoGrantError } from '../../../src/processes/sync/connectionTokens.js';
import { SANDBOX_CLIENTS } from '../../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/sandboxServer.js';
import { providerDescriptor } from '../../../src/sources/registry.js';
import { connectThroughSandbox } from '../../connections/consentFlow.js';
import { startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';

/**
 * Issue 26: a connection's OAuth tokens are technical state in a credentials record that a
 * refresh overwrites; consent changes stay events on the connection stream. A refresh racing a
 * reconnect's callback never makes the consent state look used, and both succeed; the record
 * follows the newest grant; it reads as nothing once the user's profile key is destroyed.
 * Refreshes go to the sandbox's real token endpoint (oura tokens last a day).
 */
let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;
const DAY = 86_400_000;
const client = () => ({ clientId: SANDBOX_CLIENTS.oura!.id, clientSecret: SANDBOX_CLIENTS.oura!.secret, baseUrl: sandbox.urls.oura! });

beforeAll(async () => {
  sandbox = await startSandbox();
  t = await startTestApp({ OURA_BASE_URL: sandbox.urls.oura!, OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id, OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret }, { syncPolling: false });
  tenant = await t.createTenant('credentials');
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

async function connected(): Promise<string> {
  const user = await t.createUser(tenant.apiKey);
  await connectThroughSandbox(t, tenant.apiKey, user.id, 'oura');
  return user.id;
}

/** A pull's view of the tokens, its clock a day on: the access token is due for refresh. */
const pullTokens = (userId: string) =>
  new ConnectionTokens({ eventStore: t.ctx.eventStore, credentials: t.ctx.credentials, sealer: t.ctx.valueSealer, provider: providerDescriptor('oura')!, client: client(), userId, now: () => new Date(Date.now() + DAY) });

/** A reconnect's consent callback whose code exchange waits for `gate`, answering `tokens`. */
async function reconnect(userId: string, tokens: TokenSet, gate: Promise<void>) {
  const browser = browserHash('the reconnecting browser');
  const at = new Date().toISOString();
  const { state } = await requestConsent(t.ctx.eventStore, t.ctx.valueSealer, t.ctx.grants, client(), {
    tenantId: tenant.id, userId, provider: 'oura', redirectUri: null, callbackUrl: 'https://health.example.com/oauth/oura/callback', at, by: 'test', browserHash: browser,
  });
  let exchanging!: () => void;
  const exchangeStarted = new Promise<void>((r) => (exchanging = r));
  const grants = Object.create(t.ctx.grants) as ProviderGrants;
  grants.exchangeCode = async () => {
    exchanging();
    await gate;
    return tokens;
  };
  const outcome = completeConsent(t.ctx.eventStore, t.ctx.valueSealer, t.ctx.credentials, grants, client(), {
    tenantId: tenant.id, userId, provider: connectedProvider('oura')!, stateHash: stateHash(state), code: 'code', error: null, scope: null,
    callbackUrl: 'https://health.example.com/oauth/oura/callback', application: 'instance', at, browserHash: browser,
  });
  return { outcome, exchangeStarted };
}

const newGrant = (name: string): TokenSet => ({ accessToken: `${name}-access`, refreshToken: `${name}-refresh`, expiresAt: new Date(Date.now() + 30 * DAY).toISOString(), scope: null });
const record = (userId: string) => t.ctx.readStore.get<CredentialsDoc>(CREDENTIALS, connectionStream(userId, 'oura'));

describe('connection credentials (issue 26: refresh and consent never contend for one stream revision)', () => {
  it('a refresh stored while a reconnect exchanges its code: the callback still connects, and the new grant takes the record over', async () => {
    const userId = await connected();
    const streamBefore = (await loadState(t.ctx.eventStore, connectionStream(userId, 'oura'), connectionState)).revision;
    let release!: () => void;
    const { outcome, exchangeStarted } = await reconnect(userId, newGrant('second'), new Promise((r) => (release = r)));
    await exchangeStarted;
    // The pull refreshes at the provider and stores the tokens while the callback waits on its exchange.
    const pull = pullTokens(userId);
    const refreshedAccess = await pull.accessToken();
    expect((await record(userId))!.version).toBe(2);
    expect((await loadState(t.ctx.eventStore, connectionStream(userId, 'oura'), connectionState)).revision).toBe(streamBefore! + 1);
    release();
    expect(await outcome).toMatchObject({ status: 'connected', error: null });
    const after = (await loadState(t.ctx.eventStore, connectionStream(userId, 'oura'), connectionState)).state;
    expect((await record(userId))!).toMatchObject({ grant: after.grant, version: 3 });
    // Every reader now gets the new grant's tokens, the refreshed ones of the old grant are gone.
    expect(await pullTokens(userId).accessToken()).toBe('second-access');
    expect(refreshedAccess).not.toBe('second-access');
  });

  it('a reconnect completed while a pull holds the old tokens: the pull\'s refresh is refused by the record and it takes the new grant\'s tokens, without an error', async () => {
    const userId = await connected();
    const pull = pullTokens(userId);
    await pull.load();
    const { outcome } = await reconnect(userId, newGrant('third'), Promise.resolve());
    expect(await outcome).toMatchObject({ status: 'connected' });
    const stored = (await record(userId))!;
    // The refresh (of the old grant's refresh token, still good at the sandbox) loses the race on the record's version.
    expect(await pull.accessToken()).toBe('third-access');
    expect((await record(userId))!.version).toBe(stored.version);
  });

  it('the record is sealed under the user\'s profile key: once it is destroyed (the user deleted) the tokens no longer read', async () => {
    const userId = await connected();
    await pullTokens(userId).accessToken();
    const doc = (await record(userId))!;
    expect(JSON.stringify(doc)).not.toMatch(/access|refresh/i);
    await t.ctx.dataKeys.destroy(profileKeyRef(userId));
    t.ctx.dataKeys.forget(userId);
    const state = (await loadState(t.ctx.eventStore, connectionStream(userId, 'oura'), connectionState)).state;
    expect(await t.ctx.credentials.current(userId, 'oura', state)).toBeNull();
    await expect(pullTokens(userId).load()).rejects.toBeInstanceOf(NoGrantError);
  });
});
