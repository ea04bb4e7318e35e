import type { OAuthDescriptor, ProviderDescriptor } from './providerDescriptor.js';
import { providerUrl } from './providers.js';

/** The client a connection uses: the tenant's keys or the instance's, and where the provider answers. */
export type OAuthClient = { clientId: string; clientSecret: string; baseUrl: string | undefined };

export type TokenSet = {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: string | null;
  scope: string | null;
  /** The provider's id of the user when its token answer names one (Withings userid, Polar x_user_id, Fitbit user_id, Strava athlete.id). */
  providerUserId?: string;
};

/**
 * How a provider refused: `refused` (invalid_grant, invalid_client, 401, 403: the user must consent
 * again), `rate_limited` (429, with the provider's Retry-After), `unavailable` (5xx, time-out,
 * refused connection: try again later), `rejected` (another 4xx: the request itself was refused,
 * so asking again or asking the user changes nothing; the run fails, the connection stays).
 */
export class ProviderCallError extends Error {
  override name = 'ProviderCallError';
  constructor(
    readonly kind: 'refused' | 'rate_limited' | 'unavailable' | 'rejected',
    message: string,
    readonly retryAfterSeconds: number | null = null,
    /** The provider's HTTP status, when it answered one. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

export const PROVIDER_CALL_TIMEOUT_MS = 15_000;

export function authorizeUrl(p: ProviderDescriptor, client: OAuthClient, r: { redirectUri: string; state: string; codeChallenge: string | null }): string {
  const url = providerUrl(p.oauth.authorize, client.baseUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.clientId);
  url.searchParams.set('redirect_uri', r.redirectUri);
  url.searchParams.set('scope', Object.keys(p.oauth.scopes).join(p.oauth.scopeSeparator));
  url.searchParams.set('state', r.state);
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
  const url = providerUrl(revoke, client.baseUrl);
  try {
    const res = await fetch(url, {
      method: revoke.method,
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: revoke.method === 'POST' ? new URLSearchParams({ token: accessToken, access_token: accessToken }) : undefined,
      signal: AbortSignal.timeout(PROVIDER_CALL_TIMEOUT_MS),
    });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
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
  let res: Response;
  try {
    res = await fetch(providerUrl(o.token, client.baseUrl), { method: 'POST', headers, body, signal: AbortSignal.timeout(PROVIDER_CALL_TIMEOUT_MS) });
  } catch (err) {
    throw new ProviderCallError('unavailable', `${p.name} token endpoint did not answer: ${(err as Error).name === 'TimeoutError' ? 'time-out' : (err as Error).message}`);
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // A non-JSON answer is judged by its status alone.
  }
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

const GRANT_ERRORS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client', 'invalid_token', 'access_denied']);

export function throwForStatus(p: ProviderDescriptor, res: Response, json: Record<string, unknown>): void {
  if (res.ok) return;
  const detail = String(json.error_description ?? json.error ?? json.message ?? res.statusText).slice(0, 200);
  if (res.status === 429) {
    const retry = Number(res.headers.get('retry-after'));
    throw new ProviderCallError('rate_limited', `${p.name} rate limit: ${detail}`, Number.isFinite(retry) && retry >= 0 ? retry : 60, 429);
  }
  if (res.status >= 500) throw new ProviderCallError('unavailable', `${p.name} answered ${res.status}: ${detail}`, null, res.status);
  // RFC 6749 §5.2: a token endpoint answers a dead grant with 400 and one of these codes.
  if (res.status === 401 || res.status === 403 || GRANT_ERRORS.has(String(json.error ?? ''))) throw new ProviderCallError('refused', `${p.name} refused (${res.status}): ${detail}`, null, res.status);
  throw new ProviderCallError('rejected', `${p.name} rejected the request (${res.status}): ${detail}`, null, res.status);
}
