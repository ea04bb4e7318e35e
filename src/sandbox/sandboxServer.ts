import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROVIDER_DESCRIPTORS } from '../sources/registry.js';
import type { ProviderDescriptor } from '../sources/shared/providerDescriptor.js';
import { sandboxData } from './data/index.js';
import { garminControlPush } from './data/garmin.js';
import { FailurePlan, type Failure } from './failures.js';
import { SANDBOX_CLIENTS } from './sandboxClients.js';
import type { DataHandler, Grant, IssuedToken } from './sandboxTypes.js';
import { tokenAnswer, tokenError } from './tokenAnswers.js';

/** `data` replaces the providers' data APIs (default: src/sandbox/data/, every provider's). */
export type SandboxOptions = { host?: string; ports?: Partial<Record<string, number>>; now?: () => Date; data?: Partial<Record<string, DataHandler>> };

export type Sandbox = {
  urls: Record<string, string>;
  failures: FailurePlan;
  /** The user's consent at the provider is withdrawn: every token of the provider stops working. */
  revokeConsent: (provider: string) => void;
  /** The next authorisations of the provider are refused by the user (error=access_denied). */
  denyConsent: (provider: string, deny?: boolean) => void;
  /** Calls each provider's revocation endpoint received. */
  revocations: (provider: string) => number;
  /**
   * The provider turns its API down (Fitbit since 2026-11-02, contracts §14): its authorisation
   * page, token endpoint, revocation and data API all answer 410 Gone until `retired` is false.
   */
  retire: (provider: string, retired?: boolean) => void;
  /** Registers where a push provider sends notifications, as a partner does in the provider's portal. */
  registerPush: (provider: string, url: string) => void;
  close: () => Promise<void>;
};

export const CONTROL_PATH = '/_sandbox/control';
const CODE_TTL_MS = 10 * 60_000;

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/**
 * A local stand-in for every oauth and push provider: its authorisation page (which consents at
 * once and redirects back), token endpoint (authorization code with PKCE where the provider has
 * it, refresh), revocation, and data APIs (src/sandbox/data/). Each provider listens on its own
 * port because the providers share paths (`/oauth/token`), and `<SLUG>_BASE_URL` keeps paths.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? (() => new Date());
  const failures = new FailurePlan();
  const pushUrls = new Map<string, string>();
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, IssuedToken>();
  const denied = new Set<string>();
  const retired = new Set<string>();
  const revoked = new Map<string, number>();
  const servers: Server[] = [];
  const urls: Record<string, string> = {};

  const data = options.data ?? sandboxData();
  const issue = (provider: string, scope: string, user: string): IssuedToken => {
    const t: IssuedToken = {
      provider,
      access: randomBytes(24).toString('base64url'),
      refresh: randomBytes(24).toString('base64url'),
      scope,
      expiresAt: now().getTime() + 86_400_000,
      revoked: false,
      user,
    };
    tokens.set(`a:${t.access}`, t);
    tokens.set(`r:${t.refresh}`, t);
    return t;
  };

  for (const provider of PROVIDER_DESCRIPTORS) {
    const server = createServer((req, res) => {
      handle(provider, req, res).catch(() => send(res, 500, { error: 'sandbox failure' }));
    });
    servers.push(server);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.ports?.[provider.slug] ?? 0, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      // A port in use (EADDRINUSE): the ports already opened are closed again, and the caller decides.
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))));
      throw err;
    }
    urls[provider.slug] = `http://${host}:${(server.address() as AddressInfo).port}`;
  }

  /** Applies a planned failure; true when the answer is already given (or withheld, for a time-out). */
  function failed(provider: ProviderDescriptor, res: ServerResponse, where: 'token' | 'data'): boolean {
    const f: Failure | null = failures.take(provider.slug);
    if (!f) return false;
    switch (f.kind) {
      case 'timeout':
        return true; // never answered: the caller's time-out decides
      case 'rate_limited':
        send(res, 429, { error: 'rate limit exceeded' }, { 'retry-after': String(f.retryAfterSeconds) });
        return true;
      case 'server_error':
        send(res, 503, { error: 'service unavailable' });
        return true;
      case 'invalid_grant':
        if (where === 'token') tokenError(provider.slug, res, 'invalid_grant', 'the grant was revoked or has expired');
        else send(res, 401, { error: 'invalid_token' });
        return true;
    }
  }

  async function handle(provider: ProviderDescriptor, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const o = provider.oauth;
    if (req.method === 'POST' && url.pathname === CONTROL_PATH) return control(provider, url.searchParams, res);
    if (retired.has(provider.slug)) return send(res, 410, { error: 'gone', error_description: `the ${provider.name} API has been turned down` });
    if (req.method === 'GET' && url.pathname === o.authorize.path) return authorize(provider, url.searchParams, res);
    if (req.method === 'POST' && url.pathname === o.token.path) return token(provider, req, res, await form(req));
    if (o.revoke && req.method === o.revoke.method && url.pathname === o.revoke.path) {
      const t = bearer(req) ?? (await form(req)).get('token') ?? url.searchParams.get('access_token');
      const found = t ? (tokens.get(`a:${t}`) ?? tokens.get(`r:${t}`)) : undefined;
      if (found) found.revoked = true;
      revoked.set(provider.slug, (revoked.get(provider.slug) ?? 0) + 1);
      return send(res, 200, {});
    }
    const handler = data[provider.slug];
    if (handler) {
      const access = bearer(req);
      const t = access ? tokens.get(`a:${access}`) : undefined;
      if (failed(provider, res, 'data')) return;
      if (!t || t.revoked || t.expiresAt <= now().getTime()) return send(res, 401, { error: 'invalid_token' });
      const raw = req.method === 'GET' ? '' : await text(req);
      const isJson = /^application\/json/i.test(req.headers['content-type'] ?? '');
      let json: unknown = null;
      if (isJson && raw) {
        try {
          json = JSON.parse(raw);
        } catch {
          return send(res, 400, { error: 'invalid JSON body' });
        }
      }
      const body = isJson ? new URLSearchParams() : new URLSearchParams(raw);
      const answer = await handler({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, form: body, json, token: t, now: now(), pushUrl: pushUrls.get(provider.slug) ?? null });
      if (answer) return send(res, answer.status, answer.body, answer.headers);
    }
    send(res, 404, { error: 'not found' });
  }

  function revokeAll(provider: string): void {
    for (const t of tokens.values()) if (t.provider === provider) t.revoked = true;
  }

  /** Operators and demos steer the sandbox over HTTP: POST /_sandbox/control?action=fail&kind=rate_limited&times=2. */
  function control(provider: ProviderDescriptor, q: URLSearchParams, res: ServerResponse): void {
    const action = q.get('action');
    const kind = q.get('kind');
    if (action === 'fail' && (kind === 'invalid_grant' || kind === 'rate_limited' || kind === 'server_error' || kind === 'timeout')) {
      failures.fail(provider.slug, kind, { times: Number(q.get('times') ?? 1) || 1, retryAfterSeconds: Number(q.get('retry_after') ?? 60) || 60 });
    } else if (action === 'clear') failures.clear(provider.slug);
    else if (action === 'revoke_consent') revokeAll(provider.slug);
    else if (action === 'deny_consent') denied.add(provider.slug);
    else if (action === 'allow_consent') denied.delete(provider.slug);
    else if (action === 'retire') retired.add(provider.slug);
    else if (action === 'unretire') retired.delete(provider.slug);
    else if (action === 'register_push' && provider.kind === 'push') {
      const target = q.get('url') ?? '';
      if (!/^https?:\/\//.test(target)) return send(res, 400, { error: 'url: the absolute http(s) address to push to' });
      pushUrls.set(provider.slug, target);
    } else if (action === 'push' && provider.slug === 'garmin') {
      void garminControlPush(q, sandboxUserOf(provider.slug), now()).then((a) => send(res, a.status, a.body));
      return;
    } else return send(res, 400, { error: 'action: fail (kind invalid_grant|rate_limited|server_error|timeout, times, retry_after), clear, revoke_consent, deny_consent, allow_consent, retire, unretire; push providers: register_push (url); Garmin: push (url, type, start, end)' });
    send(res, 200, { provider: provider.slug, action });
  }

  function authorize(provider: ProviderDescriptor, q: URLSearchParams, res: ServerResponse): void {
    const client = SANDBOX_CLIENTS[provider.slug]!;
    const redirect = q.get('redirect_uri');
    if (q.get('client_id') !== client.id || !redirect || q.get('response_type') !== 'code') return send(res, 400, { error: 'invalid_request' });
    const back = new URL(redirect);
    const state = q.get('state');
    if (state) back.searchParams.set('state', state);
    if (denied.has(provider.slug)) {
      back.searchParams.set('error', 'access_denied');
    } else {
      const code = randomBytes(16).toString('base64url');
      const scope = q.get('scope') ?? '';
      const method = q.get('code_challenge_method');
      if (q.get('code_challenge') && method !== 'S256') return send(res, 400, { error: 'invalid_request', error_description: 'only S256' });
      const user = sandboxUserOf(provider.slug);
      grants.set(code, { provider: provider.slug, code, redirectUri: redirect, challenge: q.get('code_challenge'), scope, used: false, user, expiresAt: now().getTime() + CODE_TTL_MS });
      back.searchParams.set('code', code);
      // Strava reports the scopes the athlete accepted on the redirect, not in the token answer.
      if (provider.slug === 'strava') back.searchParams.set('scope', scope);
    }
    res.writeHead(302, { location: back.toString() }).end();
  }

  function token(provider: ProviderDescriptor, req: IncomingMessage, res: ServerResponse, body: URLSearchParams): void {
    if (failed(provider, res, 'token')) return;
    const client = SANDBOX_CLIENTS[provider.slug]!;
    const basic = req.headers.authorization?.startsWith('Basic ') ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString('utf8') : null;
    const [id, secret] = basic ? [basic.slice(0, basic.indexOf(':')), basic.slice(basic.indexOf(':') + 1)] : [body.get('client_id'), body.get('client_secret')];
    if (id !== client.id || secret !== client.secret) return tokenError(provider.slug, res, 'invalid_client', 'unknown client or wrong secret', 401);
    if (provider.slug === 'withings' && body.get('action') !== 'requesttoken') return tokenError(provider.slug, res, 'invalid_request', 'action must be requesttoken');
    const grantType = body.get('grant_type');
    if (grantType === 'authorization_code') {
      const grant = grants.get(body.get('code') ?? '');
      if (!grant || grant.used || grant.provider !== provider.slug) return tokenError(provider.slug, res, 'invalid_grant', 'unknown or used code');
      if (grant.expiresAt <= now().getTime()) return tokenError(provider.slug, res, 'invalid_grant', 'the code has expired');
      if (body.get('redirect_uri') !== grant.redirectUri) return tokenError(provider.slug, res, 'invalid_grant', 'redirect_uri differs from the authorisation request');
      if (grant.challenge && s256(body.get('code_verifier') ?? '') !== grant.challenge) return tokenError(provider.slug, res, 'invalid_grant', 'code_verifier does not match');
      grant.used = true;
      return tokenAnswer(provider.slug, res, issue(provider.slug, grant.scope, grant.user), now());
    }
    if (grantType === 'refresh_token') {
      const old = tokens.get(`r:${body.get('refresh_token') ?? ''}`);
      if (!old || old.revoked) return tokenError(provider.slug, res, 'invalid_grant', 'refresh token revoked or unknown');
      old.revoked = true;
      return tokenAnswer(provider.slug, res, issue(provider.slug, old.scope, old.user), now());
    }
    tokenError(provider.slug, res, 'unsupported_grant_type', `grant_type ${grantType ?? '(none)'}`);
  }

  return {
    urls,
    failures,
    revokeConsent: revokeAll,
    denyConsent: (provider, deny = true) => {
      if (deny) denied.add(provider);
      else denied.delete(provider);
    },
    revocations: (provider) => revoked.get(provider) ?? 0,
    retire: (provider, on = true) => void (on ? retired.add(provider) : retired.delete(provider)),
    registerPush: (provider, url) => void pushUrls.set(provider, url),
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => { s.closeAllConnections(); s.close(() => resolve()); })));
    },
  };
}

/**
 * The sandbox plays one person per provider application, as a provider's test account does: every
 * consent (a reconnect included) reaches the same data.
 */
export function sandboxUserOf(slug: string): string {
  return createHash('sha256').update(`${slug}:${SANDBOX_CLIENTS[slug]!.id}`).digest('hex').slice(0, 16);
}

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function bearer(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  return h?.startsWith('Bearer ') ? h.slice(7) : null;
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function form(req: IncomingMessage): Promise<URLSearchParams> {
  return new URLSearchParams(await text(req));
}
