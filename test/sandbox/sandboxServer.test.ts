import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchangeCode, ProviderCallError, refreshTokens } from '../../src/sources/shared/oauthClient.js';
import { providerDescriptor } from '../../src/sources/registry.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { CONTROL_PATH, startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';

/**
 * The provider sandbox (issue "Provider sandbox"): each provider's OAuth endpoints at the paths
 * it documents, and failures on request: invalid_grant, 429 with Retry-After, 5xx.
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

const REDIRECT = 'https://health.example.com/oauth/cb';
const clientOf = (slug: string) => ({ clientId: SANDBOX_CLIENTS[slug]!.id, clientSecret: SANDBOX_CLIENTS[slug]!.secret, baseUrl: sandbox.urls[slug] });

async function codeFor(slug: string, challenge?: string): Promise<string> {
  const p = providerDescriptor(slug)!;
  const url = new URL(p.oauth.authorize.path, sandbox.urls[slug]);
  url.search = new URLSearchParams({ client_id: SANDBOX_CLIENTS[slug]!.id, redirect_uri: REDIRECT, response_type: 'code', state: 'state-123456', ...(challenge ? { code_challenge: challenge, code_challenge_method: 'S256' } : {}) }).toString();
  const res = await fetch(url, { redirect: 'manual' });
  return new URL(res.headers.get('location')!).searchParams.get('code')!;
}

describe('provider sandbox', () => {
  it('exchanges codes in every provider’s token answer shape (Withings wrapped in {status, body}, Strava with expires_at) and refreshes', async () => {
    for (const slug of ['oura', 'whoop', 'withings', 'fitbit', 'strava', 'garmin']) {
      const p = providerDescriptor(slug)!;
      const verifier = 'v'.repeat(50);
      const challenge = p.oauth.pkce ? createHash('sha256').update(verifier).digest('base64url') : undefined;
      const tokens = await exchangeCode(p, clientOf(slug), { code: await codeFor(slug, challenge), redirectUri: REDIRECT, verifier: p.oauth.pkce ? verifier : null });
      expect(tokens.accessToken.length, slug).toBeGreaterThan(10);
      expect(Date.parse(tokens.expiresAt!), slug).toBeGreaterThan(Date.now());
      const refreshed = await refreshTokens(p, clientOf(slug), tokens.refreshToken!);
      expect(refreshed.accessToken, slug).not.toBe(tokens.accessToken);
    }
  });

  it('refuses a wrong PKCE verifier and a reused code with invalid_grant', async () => {
    const fitbit = providerDescriptor('fitbit')!;
    const challenge = createHash('sha256').update('right-verifier-right-verifier-right-verifier').digest('base64url');
    const code = await codeFor('fitbit', challenge);
    await expect(exchangeCode(fitbit, clientOf('fitbit'), { code, redirectUri: REDIRECT, verifier: 'wrong' })).rejects.toMatchObject({ kind: 'refused' });
    const oura = providerDescriptor('oura')!;
    const again = await codeFor('oura');
    await exchangeCode(oura, clientOf('oura'), { code: again, redirectUri: REDIRECT, verifier: null });
    await expect(exchangeCode(oura, clientOf('oura'), { code: again, redirectUri: REDIRECT, verifier: null })).rejects.toBeInstanceOf(ProviderCallError);
  });

  it('fails on request over HTTP: 429 with Retry-After (rate_limited), 5xx (unavailable), invalid_grant (refused)', async () => {
    const oura = providerDescriptor('oura')!;
    const control = (query: string) => fetch(`${sandbox.urls.oura}${CONTROL_PATH}?${query}`, { method: 'POST' });
    expect((await control('action=fail&kind=rate_limited&retry_after=120')).status).toBe(200);
    await expect(refreshTokens(oura, clientOf('oura'), 'x')).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 120 });
    await control('action=fail&kind=server_error');
    await expect(refreshTokens(oura, clientOf('oura'), 'x')).rejects.toMatchObject({ kind: 'unavailable' });
    await control('action=fail&kind=invalid_grant');
    await expect(refreshTokens(oura, clientOf('oura'), 'x')).rejects.toMatchObject({ kind: 'refused' });
    expect((await control('action=explode')).status).toBe(400);
  });

  it('a revoked consent makes the refresh token refused', async () => {
    const whoop = providerDescriptor('whoop')!;
    const tokens = await exchangeCode(whoop, clientOf('whoop'), { code: await codeFor('whoop'), redirectUri: REDIRECT, verifier: null });
    sandbox.revokeConsent('whoop');
    await expect(refreshTokens(whoop, clientOf('whoop'), tokens.refreshToken!)).rejects.toMatchObject({ kind: 'refused' });
  });
});

describe('the sandbox refuses what Google Health and Dexcom refuse (issue 22)', () => {
  it('google and dexcom exchange codes in their token shapes and refresh; google with PKCE S256', async () => {
    for (const slug of ['google', 'dexcom']) {
      const p = providerDescriptor(slug)!;
      const verifier = 'g'.repeat(50);
      const challenge = p.oauth.pkce ? createHash('sha256').update(verifier).digest('base64url') : undefined;
      const tokens = await exchangeCode(p, clientOf(slug), { code: await codeFor(slug, challenge), redirectUri: REDIRECT, verifier: p.oauth.pkce ? verifier : null });
      expect((await refreshTokens(p, clientOf(slug), tokens.refreshToken!)).accessToken, slug).not.toBe(tokens.accessToken);
    }
  });

  it('google: a wrong PKCE verifier, a missing one and a reused code are invalid_grant (refused)', async () => {
    const google = providerDescriptor('google')!;
    const challenge = createHash('sha256').update('the-right-verifier-of-this-google-consent-0123').digest('base64url');
    await expect(exchangeCode(google, clientOf('google'), { code: await codeFor('google', challenge), redirectUri: REDIRECT, verifier: 'wrong' })).rejects.toMatchObject({ kind: 'refused' });
    await expect(exchangeCode(google, clientOf('google'), { code: await codeFor('google', challenge), redirectUri: REDIRECT, verifier: null })).rejects.toMatchObject({ kind: 'refused' });
  });

  it('an expired code (over ten minutes old) is invalid_grant; a revoked grant refuses refresh; 429 carries Retry-After', async () => {
    let now = Date.parse('2026-11-20T12:00:00Z');
    const clocked = await startSandbox({ now: () => new Date(now) });
    try {
      const dexcom = providerDescriptor('dexcom')!;
      const client = { clientId: SANDBOX_CLIENTS.dexcom!.id, clientSecret: SANDBOX_CLIENTS.dexcom!.secret, baseUrl: clocked.urls.dexcom };
      const url = new URL(dexcom.oauth.authorize.path, clocked.urls.dexcom);
      url.search = new URLSearchParams({ client_id: client.clientId, redirect_uri: REDIRECT, response_type: 'code', state: 'state-expired' }).toString();
      const code = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
      now += 10 * 60_000 + 1;
      await expect(exchangeCode(dexcom, client, { code, redirectUri: REDIRECT, verifier: null })).rejects.toMatchObject({ kind: 'refused' });

      const fresh = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
      const tokens = await exchangeCode(dexcom, client, { code: fresh, redirectUri: REDIRECT, verifier: null });
      clocked.revokeConsent('dexcom');
      await expect(refreshTokens(dexcom, client, tokens.refreshToken!)).rejects.toMatchObject({ kind: 'refused' });

      clocked.failures.fail('dexcom', 'rate_limited', { retryAfterSeconds: 30 });
      await expect(refreshTokens(dexcom, client, 'any')).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 30 });
    } finally {
      await clocked.close();
    }
  });

  it('a retired provider answers 410 Gone everywhere (retired)', async () => {
    sandbox.retire('fitbit');
    try {
      await expect(refreshTokens(providerDescriptor('fitbit')!, clientOf('fitbit'), 'x')).rejects.toMatchObject({ kind: 'retired', status: 410 });
    } finally {
      sandbox.retire('fitbit', false);
    }
  });
});
