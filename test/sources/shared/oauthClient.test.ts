import { describe, expect, it } from 'vitest';
import type { OAuthClient } from '../../../commands/connections/providerGrants.js';
import { exchangeCode, refreshTokens, revokeGrant } from '../../../src/sources/shared/oauthClient.js';
import type { ProviderDescriptor } from '../../../src/sources/shared/providerDescriptor.js';
import { strava } from '../../../src/sources/providers/strava/provider.js';
import { json, providerAndOtherHost, refusal } from './fakeProvider.js';

/**
 * Issue 20: the OAuth calls (code exchange, refresh, revocation) carry the client secret, the
 * code and the tokens; they go only to the provider's documented token and revocation addresses
 * or to its configured `<SLUG>_BASE_URL`, through the shared SSRF guard, never following a
 * redirect, and a token answer is read up to 1 MiB.
 */
const hosts = providerAndOtherHost((_r, res) => json(res, 200, { access_token: 'a', refresh_token: 'r', expires_in: 3600 }));

// Strava authenticates the client in the body: a followed redirect would carry the secret along.
const client = (): OAuthClient => ({ clientId: 'client-1', clientSecret: 'client-secret-1', baseUrl: hosts.provider.origin });

describe('OAuth calls go to the provider’s documented addresses only (issue 20, finding 3)', () => {
  it('does not follow the token endpoint’s redirect: the code exchange fails and the other host receives neither the code nor the secret', async () => {
    hosts.answer = (_r, res) => {
      res.writeHead(307, { location: `${hosts.other.origin}/oauth/token` });
      res.end();
    };
    const err = await refusal(exchangeCode(strava, client(), { code: 'the-code', redirectUri: 'https://health.example.com/cb', verifier: null }));
    expect(err).toMatchObject({ kind: 'rejected', status: 307 });
    expect(hosts.provider.seen).toHaveLength(1);
    expect(hosts.other.seen).toHaveLength(0);
  });

  it('does not follow a refresh’s redirect either', async () => {
    hosts.answer = (_r, res) => {
      res.writeHead(308, { location: `${hosts.other.origin}/oauth/token` });
      res.end();
    };
    await refusal(refreshTokens(strava, client(), 'refresh-1'));
    expect(hosts.other.seen).toHaveLength(0);
  });

  it('refuses a token endpoint on a loopback address when STRAVA_BASE_URL is not set, sending nothing', async () => {
    const local: ProviderDescriptor = { ...strava, oauth: { ...strava.oauth, token: { origin: hosts.provider.origin, path: '/oauth/token' } } };
    const err = await refusal(exchangeCode(local, { ...client(), baseUrl: undefined }, { code: 'c', redirectUri: 'https://health.example.com/cb', verifier: null }));
    expect(err.kind).toBe('rejected');
    expect(err.message).toMatch(/loopback.*STRAVA_BASE_URL/);
    expect(hosts.provider.seen).toHaveLength(0);
  });

  it('revocation does not follow a redirect: it reports failure and the other host receives no token', async () => {
    hosts.answer = (_r, res) => {
      res.writeHead(302, { location: `${hosts.other.origin}/revoke` });
      res.end();
    };
    expect(await revokeGrant(strava, client(), 'access-1')).toBe(false);
    expect(hosts.provider.seen).toHaveLength(1);
    expect(hosts.other.seen).toHaveLength(0);
  });

  it('drops an endless token answer at 1 MiB', async () => {
    let written: Promise<number> = Promise.resolve(0);
    hosts.answer = (_r, res, f) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      written = f.streamForever(res);
    };
    const err = await refusal(exchangeCode(strava, client(), { code: 'c', redirectUri: 'https://health.example.com/cb', verifier: null }));
    expect(err.message).toMatch(/more than 1 MiB/);
    expect(await written).toBeLessThan(17 * 1024 * 1024);
  });

  it('still exchanges a code at the configured base URL', async () => {
    const tokens = await exchangeCode(strava, client(), { code: 'c', redirectUri: 'https://health.example.com/cb', verifier: null });
    expect(tokens).toMatchObject({ accessToken: 'a', refreshToken: 'r' });
    expect(hosts.provider.seen[0]).toMatchObject({ method: 'POST', path: '/oauth/token' });
  });
});
