import fp from 'fastify-plugin';
import type { FastifyContextConfig, FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { AppContext } from './appContext.js';
import { findApiKeyByHash } from '../../queries/tenants/findApiKey.js';
import { getTenant } from '../../queries/tenants/listTenants.js';
import { findUserTokenByHash } from '../../queries/users/findUserToken.js';
import { digestsEqual, secretKindOf, sha256Hex } from '../shared/secrets.js';
import { UUID_RE } from '../shared/ids.js';
import { problems } from './problems.js';
import { StampedCache, StampPerTurn } from '../shared/stampedCache.js';
import type { USER_SCOPES } from '../../commands/users/mintUserToken.js';

export type Principal =
  | { kind: 'admin'; actorId: 'admin' }
  | { kind: 'tenant'; tenantId: string; keyId: string; actorId: string }
  | { kind: 'user'; tenantId: string; userId: string; tokenId: string; scopes: string[]; expiresAt: string; actorId: string };

export type AuthKind = 'none' | 'admin' | 'tenant' | 'user';
export type UserScope = (typeof USER_SCOPES)[number];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which credential the route takes (spec "Authentication"), or which ones (any of them). */
    auth?: AuthKind | readonly Exclude<AuthKind, 'none'>[];
    /**
     * The scope a user token needs on this route. Checked with the credential, before the body
     * is read (contracts §18); every user-token route that takes a body must name one.
     */
    scope?: UserScope;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The tenant the call acts on: the key's tenant, or `{tenant_id}` on admin routes. */
    tenantId: string | null;
    /**
     * The read store's change stamp asked before the credential was looked up (null when none
     * was asked): whatever the request reads from the store afterwards is at least this new, so
     * a handler may keep it under this stamp (StampedCache) without asking again.
     */
    readStamp: number | null;
  }
}

const KIND_NAMES: Record<Exclude<AuthKind, 'none'>, string> = { admin: 'an instance admin key', tenant: 'a tenant API key', user: 'a user token' };

/**
 * Authenticates `Authorization: Bearer` on every route that asks for a credential: 401 (with
 * WWW-Authenticate) for a missing, unknown, revoked or expired secret; 403 for a valid secret of
 * the wrong kind. Secrets are looked up by their SHA-256 and compared in constant time.
 *
 * Live credentials found are kept by their hash under the read store's change stamp
 * (StampedCache): any change to the store, by this process or another (a revocation through the
 * CLI, a token revoked by a user's deletion), forgets them all, so the very next request reads
 * again. Unknown secrets are never kept, so what strangers send cannot fill the cache.
 */
export const authPlugin = fp<{ ctx: AppContext }>(async (app, { ctx }) => {
  app.decorateRequest('principal', null);
  app.decorateRequest('tenantId', null);
  app.decorateRequest('readStamp', null);
  const known = new StampedCache<Principal>({ max: 10_000 });
  // One change stamp for the requests read in a turn, asked after all of them (StampPerTurn).
  const stamps = new StampPerTurn(() => ctx.readStore.changeStamp());

  // Written with `done` rather than async: the common case (a kept credential) finishes without a promise.
  app.addHook('onRequest', (request, _reply, done) => {
    const required = request.routeOptions.config?.auth ?? 'none';
    if (required === 'none') return done();
    const scope = request.routeOptions.config?.scope;
    let secret: Secret;
    try {
      secret = secretOf(ctx, request);
    } catch (err) {
      return done(err as Error);
    }
    if (secret.kind === 'admin') return admit(request, required, scope, ADMIN, done);
    stamps.after((stamp) => {
      let found: Principal | Promise<Principal>;
      try {
        found = credentialAt(ctx, request, secret, stamp, known);
      } catch (err) {
        return done(err as Error);
      }
      if (found instanceof Promise) found.then((principal) => admit(request, required, scope, principal, done), done);
      else admit(request, required, scope, found, done);
    }, done);
  });

  // Admin routes act on `{tenant_id}`: an unknown or malformed one is a 404 (spec "Instance admin routes"),
  // decided before the request is validated so that a bad tenant is a 404 whatever else is wrong.
  // Only admin routes carry this hook; the others pay nothing for it.
  const adminTenant: preValidationAsyncHookHandler = async (request) => {
    if (request.principal?.kind !== 'admin') return;
    const tenantId = (request.params as { tenant_id?: string } | undefined)?.tenant_id;
    if (tenantId === undefined) return;
    if (!UUID_RE.test(tenantId) || !(await getTenant(ctx.readStore, tenantId.toLowerCase()))) throw problems.notFound('tenant not found');
    request.tenantId = tenantId.toLowerCase();
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === 'admin') route.preValidation = [adminTenant, ...[route.preValidation ?? []].flat()];
    if (kindsOf(route.config?.auth).includes('user') && [route.method].flat().some((m) => BODY_METHODS.has(m))) userBodyRoutes.push(route);
  });
  // contracts §18: a scope checked in the handler would be checked after the body was read. Asked
  // once every route is in, so that a scope declared by a later onRoute hook (withUserScope) counts.
  const userBodyRoutes: { method: string | string[]; url: string; config?: FastifyContextConfig }[] = [];
  app.addHook('onReady', async () => {
    const unscoped = userBodyRoutes.filter((r) => !r.config?.scope);
    if (unscoped.length) throw new Error(`routes taking a user token and a body must name its scope (config.scope): ${unscoped.map((r) => `${String(r.method)} ${r.url}`).join(', ')}`);
  });
});

/**
 * `plugin` with `scope` declared on each of its user-token routes that names none: for a plugin
 * whose routes all need one scope, declared where the plugin is registered (buildServer.ts).
 * Called in the registering context, as adminMirror does, so the prefix applies once.
 */
export function withUserScope<P extends (app: FastifyInstance, opts: never) => Promise<void>>(plugin: P, scope: UserScope): P {
  const scoped = async (app: FastifyInstance, opts: Parameters<P>[1]) => {
    app.addHook('onRoute', (route) => {
      if (kindsOf(route.config?.auth).includes('user') && !route.config?.scope) route.config = { ...route.config, scope };
    });
    await plugin(app, opts);
  };
  return scoped as unknown as P;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** The credential kinds a route's `auth` names (cors.ts asks it too). */
export const kindsOf = (auth: AuthKind | readonly Exclude<AuthKind, 'none'>[] | undefined): readonly AuthKind[] => (typeof auth === 'string' ? [auth] : (auth ?? ['none']));

/**
 * Lets the principal in, or refuses it (403) for a kind or a scope the route does not take:
 * all of it decided from the headers, before a byte of the body is read (contracts §18).
 */
function admit(request: FastifyRequest, required: AuthKind | readonly Exclude<AuthKind, 'none'>[], scope: UserScope | undefined, principal: Principal, done: (err?: Error) => void): void {
  if (typeof required === 'string' ? principal.kind !== required : !required.includes(principal.kind)) {
    const wanted = kindsOf(required).map((k) => KIND_NAMES[k as Exclude<AuthKind, 'none'>]).join(' or ');
    return done(problems.forbidden(`this route needs ${wanted}, not ${KIND_NAMES[principal.kind]}`));
  }
  if (scope && principal.kind === 'user' && !principal.scopes.includes(scope)) {
    return done(problems.forbidden(`this route needs a user token with the ${scope} scope`));
  }
  request.principal = principal;
  if (principal.kind !== 'admin') request.tenantId = principal.tenantId;
  done();
}

type Secret = { kind: 'admin' } | { kind: 'tenantKey' | 'userToken'; hash: string };

/** The request's bearer secret, by kind and hash; a 401 problem (thrown) for a missing, malformed or unknown admin one. */
function secretOf(ctx: AppContext, request: FastifyRequest): Secret {
  const header = request.headers.authorization;
  const match = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
  if (!match) throw problems.unauthorized('missing bearer credentials');
  const secret = match[1]!;
  const kind = secretKindOf(secret);
  const hash = sha256Hex(secret);
  if (kind === 'admin') {
    if (digestsEqual(hash, ctx.adminKeyHash)) return { kind };
    throw unknownCredentials();
  }
  if (kind === null) throw unknownCredentials();
  return { kind, hash };
}

/**
 * The principal of a tenant key or user token, or a 401 problem (thrown). `stamp` is the read
 * store's change stamp asked after the request was read (StampPerTurn) and before the lookup, so a
 * credential kept under it is never older than it. Synchronous when `known` holds the credential
 * at that stamp; a user token's expiry is checked on every request either way.
 */
function credentialAt(ctx: AppContext, request: FastifyRequest, secret: Extract<Secret, { hash: string }>, stamp: number | null, known: StampedCache<Principal>): Principal | Promise<Principal> {
  request.readStamp = stamp;
  const kept = known.get(stamp, secret.hash);
  if (kept) {
    if (kept.kind === 'user' && !(Date.parse(kept.expiresAt) > Date.now())) throw unknownCredentials();
    return kept;
  }
  return lookUp(ctx, secret.kind, secret.hash).then((principal) => {
    if (!principal) throw unknownCredentials();
    known.set(stamp, secret.hash, principal);
    return principal;
  });
}

const ADMIN: Principal = Object.freeze({ kind: 'admin', actorId: 'admin' });

const unknownCredentials = () => problems.unauthorized('unknown, revoked or expired credentials');

/** A live credential's principal from the read store, or null. Kept principals are shared by requests, hence frozen. */
async function lookUp(ctx: AppContext, kind: 'tenantKey' | 'userToken', hash: string): Promise<Principal | null> {
  if (kind === 'tenantKey') {
    const key = await findApiKeyByHash(ctx.readStore, hash);
    if (key && digestsEqual(key._id, hash) && key.revoked_at === null) {
      return Object.freeze({ kind: 'tenant', tenantId: key.tenant_id, keyId: key.key_id, actorId: key.key_id });
    }
    return null;
  }
  const token = await findUserTokenByHash(ctx.readStore, hash);
  if (token && digestsEqual(token._id, hash) && Date.parse(token.expires_at) > Date.now()) {
    return Object.freeze({
      kind: 'user',
      tenantId: token.tenant_id,
      userId: token.user_id,
      tokenId: token.token_id,
      scopes: Object.freeze([...token.scopes]) as string[],
      expiresAt: token.expires_at,
      actorId: token.token_id,
    });
  }
  return null;
}
