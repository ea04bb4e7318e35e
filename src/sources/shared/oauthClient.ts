import type { OAuthClient, TokenSet } from '../../../commands/connections/providerGrants.js';
import { ProviderCallError, throwForStatus } from './providerCallError.js';
import type { OAuthDescriptor, ProviderAddress, ProviderDescriptor } from './providerDescriptor.js';
import { callProvider, jsonObject } from './providerFetch.js';
import { ProviderOrigins } from './providerOrigins.js';
import { providerUrl } from './providers.js';

export { PROVIDER_CALL_TIMEOUT_MS, ProviderCallError, throwForStatus } from './providerCallError.js';

/** A token answer is a few hundred bytes; anything near this is not one. */
const TOKEN_ANSWER_MAX_BYTES = 1024 * 1024;

export function authorizeUrl(p: ProviderDescriptor, client: OAuthClient, r: { redirectUri: string; state: string; codeChallenge: string | null }): string {
  const url = providerUrl(p.oauth.authorize, client.baseUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.clientId);
  url.searchParams.set('redirect_uri', r.redirectUri);
  url.searchParams.set('scope', Object.keys(p.oauth.scopes).join(p.oauth.scopeSeparator));
  url.searchParams.set('state', r.state);
  for (const [name, value] of Object.entries(p.oauth.authorizeParams ?? {})) url.searchParams.set(name, value);
  if (r.codeChallenge) {
    url.searchParams.set('code_challenge', r.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}

export async function exchangeCode(p: ProviderDescriptor, client: OAuthClient, r: { code: string; redirectUri: string; verifier: string | null }, now = new Date()): Promise<TokenSet> {
  const body = new URLSearchParams({ grant_type: 'authorization_code', code: r.code, redirect_uri: r.redirectUri });
  if (r.verifier) body.set('code_verifier', r.verifier);
  return tokenCall(p, client, body, now);
}

export async function refreshTokens(p: ProviderDescriptor, client: OAuthClient, refreshToken: string, now = new Date()): Promise<TokenSet> {
  return tokenCall(p, client, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }), now);
}

/** Best effort (spec: grants revoked best effort): a provider that fails to answer leaves the grant to expire. */
export async function revokeGrant(p: ProviderDescriptor, client: OAuthClient, accessToken: string): Promise<boolean> {
  const revoke = p.oauth.revoke;
  if (!revoke) return false;
  try {
    const res = await oauthCall(p, client, revoke, {
      method: revoke.method,
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: revoke.method === 'POST' ? new URLSearchParams({ token: accessToken, access_token: accessToken }).toString() : undefined,
    });
    return res.status >= 200 && res.status < 300;
  } catch {
    return false;
  }
}

/** A call to one of the provider's OAuth endpoints: its documented origin, or the configured one (providerFetch.ts). */
function oauthCall(p: ProviderDescriptor, client: OAuthClient, address: ProviderAddress, r: { method: 'POST' | 'DELETE'; headers: Record<string, string>; body?: string }) {
  const origins = new ProviderOrigins(p, [address.origin], client.baseUrl);
  return callProvider({ provider: p, origins, url: origins.at(address.origin, address.path), ...r, maxBytes: TOKEN_ANSWER_MAX_BYTES });
}

async function tokenCall(p: ProviderDescriptor, client: OAuthClient, body: URLSearchParams, now: Date): Promise<TokenSet> {
  const o: OAuthDescriptor = p.oauth;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (o.clientAuth === 'basic') headers.authorization = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
  else {
    body.set('client_id', client.clientId);
    body.set('client_secret', client.clientSecret);
  }
  // Withings names the operation in the body of its one OAuth endpoint.
  if (p.slug === 'withings') body.set('action', 'requesttoken');
  const res = await oauthCall(p, client, o.token, { method: 'POST', headers, body: body.toString() });
  let json = jsonObject(res.body);
  throwForStatus(p, res, json);
  // Withings answers HTTP 200 with `{status, body}`; a non-zero status is its error.
  if (p.slug === 'withings') {
    if (json.status !== 0) throw new ProviderCallError('refused', `Withings refused the grant (status ${String(json.status)}): ${String(json.error ?? '')}`.slice(0, 300));
    json = (json.body ?? {}) as Record<string, unknown>;
  }
  if (typeof json.access_token !== 'string') throw new ProviderCallError('unavailable', `${p.name} token answer has no access_token`);
  const expiresAt =
    typeof json.expires_at === 'number'
      ? new Date(json.expires_at * 1000).toISOString()
      : typeof json.expires_in === 'number'
        ? new Date(now.getTime() + json.expires_in * 1000).toISOString()
        : null;
  const userId = tokenAnswerUserId(json);
  return {
    accessToken: json.access_token,
    refreshToken: typeof json.refresh_token === 'string' ? json.refresh_token : null,
    expiresAt,
    scope: typeof json.scope === 'string' ? json.scope : null,
    ...(userId ? { providerUserId: userId } : {}),
  };
}

/** The user a token answer names: Polar's data paths need it (x_user_id); the others are kept for the record. */
function tokenAnswerUserId(json: Record<string, unknown>): string | null {
  const athlete = json.athlete as Record<string, unknown> | undefined;
  for (const v of [json.x_user_id, json.userid, json.user_id, athlete && typeof athlete === 'object' ? athlete.id : undefined]) {
    if ((typeof v === 'string' && v) || (typeof v === 'number' && Number.isFinite(v))) return String(v);
  }
  return null;
}

