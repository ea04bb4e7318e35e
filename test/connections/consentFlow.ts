import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { CONSENT_STATE_TTL_MS, connectionOwner, connectionStream, VERIFIER_PURPOSE, type ConsentRequested } from '../../commands/connections/connection.js';
import { providerAuthorizeUrl, stateHash } from '../../commands/connections/requestConsent.js';
import { instanceUrls, resolveProviderClient } from '../../queries/connections/providerKeys.js';
import { connectedProvider } from '../../src/catalog/providers.js';
import { sealValue } from '../../src/crypto/sealedValue.js';
import { consentStartUrl } from '../../src/server/routes/oauthFlow.js';
import type { ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import { consentThroughSandbox, CookieJar, type ServiceAnswer, type ServiceGet } from '../../src/sandbox/consentBrowser.js';
import type { ContextOptions } from '../../src/app/context.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../src/sandbox/sandboxSettings.js';
import type { Response, TestApp } from '../support/server.js';
import { expectStatus, startTestApp } from '../support/server.js';
import { eventually } from '../webhooks/receiver.js';

/** A browser's GET to the service under test (injected), carrying its cookies. */
export const injectGet =
  (t: TestApp): ServiceGet<ServiceAnswer & { response: Response }> =>
  async (url, cookie) => {
    const response = await t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
    const set = response.headers['set-cookie'];
    return { response, status: response.statusCode, location: (response.headers.location as string | undefined) ?? null, setCookies: set === undefined ? [] : [set].flat() };
  };

/**
 * Runs the consent flow over HTTP: POST …/connections/{provider}, open authorize_url on the
 * service (it binds the state to this browser's cookie and redirects), follow the sandbox's
 * authorisation page (it consents at once and redirects back), then hand the redirect to the
 * service's callback with the cookie. Answers the callback's response.
 */
export async function connectThroughSandbox(t: TestApp, apiKey: string, userId: string, provider: string, body: Record<string, unknown> = {}, jar = new CookieJar()) {
  const started = await t.call('POST', `/v1/users/${userId}/connections/${provider}`, { key: apiKey, body });
  expectStatus(started, 200);
  const authorizeUrl = (started.json() as { authorize_url: string }).authorize_url;
  const flow = await consentThroughSandbox(authorizeUrl, injectGet(t), jar);
  expect(new URL(flow.callbackUrl).pathname).toBe(`/oauth/${provider}/callback`);
  return { authorizeUrl, providerUrl: flow.providerUrl, callbackUrl: flow.callbackUrl, callback: flow.callback.response };
}

type RunSummary = { id: number; provider: string; trigger: string; status: string; objects_stored: number | null; error: string | null };

/** The user's sync runs, newest first (GET /v1/users/{id}/sync-runs). */
export async function syncRunsOf(t: TestApp, apiKey: string, userId: string): Promise<RunSummary[]> {
  const res = await t.call('GET', `/v1/users/${userId}/sync-runs`, { key: apiKey });
  expectStatus(res, 200);
  return (res.json() as { data: RunSummary[] }).data;
}

/** Runs the sync engine until nothing is due (the tests' engines run only when told). */
export async function drainSync(t: TestApp): Promise<void> {
  for (let pass = 0; pass < 20; pass++) {
    await t.ctx.settle();
    if ((await t.ctx.sync.runDue()).length === 0) return;
  }
}

/** Every payload stored for the user normalised: no ETL job or pull of the user left pending or running. */
export async function normalised(t: TestApp, apiKey: string, userId: string): Promise<void> {
  await eventually(async () => {
    await t.ctx.settle();
    const coverage = await t.call('GET', `/v1/users/${userId}/coverage`, { key: apiKey });
    expectStatus(coverage, 200);
    return (coverage.json() as { pending_jobs: number }).pending_jobs === 0;
  }, 120_000);
  await t.ctx.settle();
}

/**
 * Connects the user through the sandbox, lets the backfill the grant queues run to its end and
 * the ETL normalise what it stored; answers the backfill run.
 */
export async function backfillThroughSandbox(t: TestApp, apiKey: string, userId: string, provider: string): Promise<RunSummary> {
  await connectThroughSandbox(t, apiKey, userId, provider);
  const backfill = () => syncRunsOf(t, apiKey, userId).then((runs) => runs.find((r) => r.provider === provider && r.trigger === 'backfill'));
  await eventually(async () => {
    await t.ctx.settle();
    return backfill();
  });
  await drainSync(t);
  await normalised(t, apiKey, userId);
  return (await backfill())!;
}

/** The provider's id of the user that the connection recorded at consent (connections read model), if any. */
export async function providerUserIdOf(t: TestApp, userId: string, provider: string): Promise<string | undefined> {
  return (await t.ctx.readStore.get<ConnectionDoc>('connections', `${userId}:${provider}`))?.provider_user_id ?? undefined;
}

/**
 * The user connected to `provider` through the sandbox (a consent that must succeed), with the
 * provider's id of the user read at consent. A retired provider's connection is one made before
 * its retirement (`tenantId` needed then).
 */
export async function connectedProviderUser(t: TestApp, apiKey: string, userId: string, provider: string, tenantId?: string): Promise<string> {
  if (connectedProvider(provider)?.retirement) await connectBeforeRetirement(t, tenantId!, userId, provider);
  else expect((await connectThroughSandbox(t, apiKey, userId, provider)).callback.statusCode, provider).toBe(200);
  const id = await providerUserIdOf(t, userId, provider);
  expect(id, provider).toBeTruthy();
  return id!;
}

export type SandboxedApp = { sandbox: Sandbox; t: TestApp; base: string; close: () => Promise<void> };

/**
 * A running sandbox and a test app whose `slugs` providers are the sandbox's (sandboxSettings,
 * then `env`), listening on a port for what reaches it over HTTP (pushes, deliveries); `close`
 * stops both.
 */
export async function startSandboxedApp(slugs: readonly string[], env: Record<string, string> = {}, options: ContextOptions = {}): Promise<SandboxedApp> {
  const sandbox = await startSandbox();
  let t: TestApp | undefined;
  const close = async () => {
    await t?.close();
    await sandbox.close();
  };
  try {
    t = await startTestApp({ ...sandboxSettings(sandbox, slugs), ...env }, options);
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    return { sandbox, t, base, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * A connection made before its provider was retired (contracts §14: connecting is refused since):
 * the consent request is appended as requestConsent appended it then, and the rest of the flow
 * runs over HTTP as for any provider. Only tests of what happens to such connections need it.
 */
export async function connectBeforeRetirement(t: TestApp, tenantId: string, userId: string, provider: string, jar = new CookieJar()) {
  const facts = connectedProvider(provider)!;
  const client = (await resolveProviderClient(t.ctx.readStore, t.ctx.valueSealer, t.ctx.config.providers, tenantId, provider))!;
  const state = randomBytes(32).toString('base64url');
  const verifier = facts.oauth.pkce ? randomBytes(48).toString('base64url') : null;
  const at = new Date().toISOString();
  const requested: ConsentRequested = {
    type: 'connection.consent_requested',
    data: {
      tenant_id: tenantId,
      user_id: userId,
      provider,
      state_hash: stateHash(state),
      redirect_uri: null,
      verifier_sealed: verifier ? sealValue(t.ctx.valueSealer, VERIFIER_PURPOSE, connectionOwner(userId, provider), verifier) : null,
      expires_at: new Date(Date.now() + CONSENT_STATE_TTL_MS).toISOString(),
      at,
      by: 'test:before-retirement',
    },
  };
  const appended = await t.ctx.eventStore.appendToStream(connectionStream(userId, provider), [requested], { expectedRevision: 'any' });
  await t.ctx.settle(appended.lastPosition, ['connections']);
  const providerUrl = providerAuthorizeUrl(facts, t.ctx.grants, client, { callbackUrl: instanceUrls(t.ctx.config.publicBaseUrl, provider).redirect, state, verifier });
  const flow = await consentThroughSandbox(consentStartUrl(t.ctx.config.publicBaseUrl, provider, providerUrl), injectGet(t), jar);
  expect(flow.callback.status).toBe(200);
}
