import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from './appContext.js';
import { findApiKeyByHash } from '../../queries/tenants/findApiKey.js';
import { getTenant } from '../../queries/tenants/listTenants.js';
import { findUserTokenByHash } from '../../queries/users/findUserToken.js';
import { digestsEqual, secretKindOf, sha256Hex } from '../shared/secrets.js';
import { UUID_RE } from '../shared/ids.js';
import { problems } from './problems.js';

export type Principal =
  | { kind: 'admin'; actorId: 'admin' }
  | { kind: 'tenant'; tenantId: string; keyId: string; actorId: string }
  | { kind: 'user'; tenantId: string; userId: string; tokenId: string; scopes: string[]; expiresAt: string; actorId: string };

export type AuthKind = 'none' | 'admin' | 'tenant' | 'user';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which credential the route takes (spec "Authentication"). */
    auth?: AuthKind;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The tenant the call acts on: the key's tenant, or `{tenant_id}` on admin routes. */
    tenantId: string | null;
  }
}

const KIND_NAMES: Record<Exclude<AuthKind, 'none'>, string> = { admin: 'an instance admin key', tenant: 'a tenant API key', user: 'a user token' };

/**
 * Authenticates `Authorization: Bearer` on every route that asks for a credential: 401 (with
 * WWW-Authenticate) for a missing, unknown, revoked or expired secret; 403 for a valid secret of
 * the wrong kind. Secrets are looked up by their SHA-256 and compared in constant time.
 */
export const authPlugin = fp<{ ctx: AppContext }>(async (app, { ctx }) => {
  app.decorateRequest('principal', null);
  app.decorateRequest('tenantId', null);

  app.addHook('onRequest', async (request) => {
    const required = request.routeOptions.config?.auth ?? 'none';
    if (required === 'none') return;
    const principal = await authenticate(ctx, request);
    if (principal.kind !== required) {
      throw problems.forbidden(`this route needs ${KIND_NAMES[required]}, not ${KIND_NAMES[principal.kind]}`);
    }
    request.principal = principal;
    if (principal.kind !== 'admin') request.tenantId = principal.tenantId;
  });

  // Admin routes act on `{tenant_id}`: an unknown or malformed one is a 404 (spec "Instance admin routes"),
  // decided before the request is validated so that a bad tenant is a 404 whatever else is wrong.
  app.addHook('preValidation', async (request) => {
    if (request.principal?.kind !== 'admin') return;
    const tenantId = (request.params as { tenant_id?: string } | undefined)?.tenant_id;
    if (tenantId === undefined) return;
    if (!UUID_RE.test(tenantId) || !(await getTenant(ctx.readStore, tenantId.toLowerCase()))) throw problems.notFound('tenant not found');
    request.tenantId = tenantId.toLowerCase();
  });
});

export async function authenticate(ctx: AppContext, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  const match = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
  if (!match) throw problems.unauthorized('missing bearer credentials');
  const secret = match[1]!;
  const kind = secretKindOf(secret);
  const hash = sha256Hex(secret);
  switch (kind) {
    case 'admin':
      if (digestsEqual(hash, ctx.adminKeyHash)) return { kind: 'admin', actorId: 'admin' };
      break;
    case 'tenantKey': {
      const key = await findApiKeyByHash(ctx.readStore, hash);
      if (key && digestsEqual(key._id, hash) && key.revoked_at === null) {
        return { kind: 'tenant', tenantId: key.tenant_id, keyId: key.key_id, actorId: key.key_id };
      }
      break;
    }
    case 'userToken': {
      const token = await findUserTokenByHash(ctx.readStore, hash);
      if (token && digestsEqual(token._id, hash) && Date.parse(token.expires_at) > Date.now()) {
        return {
          kind: 'user',
          tenantId: token.tenant_id,
          userId: token.user_id,
          tokenId: token.token_id,
          scopes: token.scopes,
          expiresAt: token.expires_at,
          actorId: token.token_id,
        };
      }
      break;
    }
  }
  throw problems.unauthorized('unknown, revoked or expired credentials');
}
