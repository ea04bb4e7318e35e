import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { connectionOwner, TOKEN_PURPOSE } from '../../../commands/connections/connection.js';
import { disconnect } from '../../../commands/connections/disconnect.js';
import { requestConsent, retiredDetail } from '../../../commands/connections/requestConsent.js';
import { listConsentHistory, toConsentEventView } from '../../../queries/connections/consentHistory.js';
import { listConnections, toConnectionView } from '../../../queries/connections/listConnections.js';
import { instanceUrls, resolveProviderClient } from '../../../queries/connections/providerKeys.js';
import { getUser } from '../../../queries/users/getUser.js';
import type { AppContext } from '../appContext.js';
import type { TokenSet } from '../../../commands/connections/providerGrants.js';
import { CONNECTED_SLUGS, connectedProvider } from '../../catalog/providers.js';
import { openValue } from '../../crypto/sealedValue.js';
import { UUID_RE } from '../../shared/ids.js';
import { problems } from '../problems.js';
import { DateTime, PageQuery, pageOf, Uuid, withProblems } from '../schemas.js';
import { consentStartUrl } from './oauthFlow.js';
import { startProviderErasure } from './providerErasure.js';
import type { RouteOptions } from './routeOptions.js';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Spec "Providers and connections": absolute https, or http for localhost only. */
export const RedirectUri = z
  .string()
  .max(2048)
  .refine((v) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      return false;
    }
    return u.protocol === 'https:' || (u.protocol === 'http:' && LOCAL_HOSTS.has(u.hostname));
  }, 'redirect_uri must be an absolute https URL (http only for localhost)')
  .describe('Where the user is sent after consenting, with query status and provider; absolute https (http only for localhost)');

const Health = z.object({ healthy: z.boolean(), reason: z.string().nullable(), action: z.string().nullable(), since: DateTime, retry_at: DateTime.nullable() });
export const Connection = z
  .object({
    provider: z.string(),
    status: z.enum(['active', 'needs_reauth', 'disconnected']),
    scopes: z.array(z.string()),
    last_sync_at: DateTime.nullable(),
    initial_backfill_at: DateTime.nullable(),
    created_at: DateTime,
    updated_at: DateTime,
    connected_at: DateTime,
    health: Health.describe('Whether the connection syncs; reason and action (reconnect: the user must consent again; none: the caller only waits until retry_at)'),
  })
  .describe('Connection');
const ConsentEvent = z
  .object({ id: z.number().int(), at: DateTime, provider: z.string(), category: z.string(), action: z.enum(['granted', 'revoked']), actor_id: z.string(), evidence: z.string() })
  .describe('Consent event');

const UserProvider = z.object({ id: z.string().describe('User id (uuid)'), provider: z.string().describe('Provider slug') });

async function requireUser(ctx: AppContext, tenantId: string, id: string): Promise<string> {
  if (!UUID_RE.test(id)) throw problems.notFound('user not found');
  const userId = id.toLowerCase();
  if (!(await getUser(ctx.readStore, tenantId, userId))) throw problems.notFound('user not found');
  return userId;
}

/** Connections of a user (spec "Providers and connections"); the list is mirrored on the admin routes. */
export const connectionsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/connections',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: "The user's provider connections with their health",
        tags: ['connections'],
        params: z.object({ id: z.string().describe('User id (uuid)') }),
        response: withProblems({ 200: z.object({ data: z.array(Connection) }) }),
      },
    },
    async (request) => {
      const userId = await requireUser(ctx, request.tenantId!, request.params.id);
      return { data: (await listConnections(ctx.readStore, request.tenantId!, userId)).map(toConnectionView) };
    },
  );
  app.post(
    '/users/:id/connections/:provider',
    {
      config: { auth: 'tenant', audit: 'connection.consent_requested' },
      schema: {
        summary: 'Start the consent flow of a provider: answers the address to send the user to',
        description:
          "Authorisation code grant with PKCE where the provider supports it; the state is single use and expires after 10 minutes. authorize_url is the service's start address (PUBLIC_BASE_URL/oauth/{provider}/authorize) with the query the provider's authorisation page receives: the first browser to open it owns the flow, and only that browser can complete it. Send the user's browser to it directly, never as a message. 409 when the provider is retired (the detail names its successor), is not enabled for the tenant, or an erasure of its data runs.",
        tags: ['connections'],
        params: UserProvider,
        body: z.object({ redirect_uri: RedirectUri.optional() }).nullish(),
        response: withProblems({ 200: z.object({ authorize_url: z.string() }) }, [400, 401, 403, 404, 409]),
      },
    },
    async (request) => {
      const tenantId = request.tenantId!;
      const { provider } = request.params;
      const descriptor = connectedProvider(provider);
      if (!descriptor) throw problems.unknownSlug('provider', provider, CONNECTED_SLUGS);
      const userId = await requireUser(ctx, tenantId, request.params.id);
      if (descriptor.retirement) throw problems.conflict(retiredDetail(descriptor));
      const client = await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, tenantId, provider);
      if (!client) throw problems.conflict(`${descriptor.name} is not enabled for this tenant: set its keys (or the instance's ${provider.toUpperCase()}_CLIENT_ID and _CLIENT_SECRET)`);
      const result = await requestConsent(ctx.eventStore, ctx.valueSealer, ctx.grants, client, {
        tenantId,
        userId,
        provider,
        redirectUri: request.body?.redirect_uri ?? null,
        callbackUrl: instanceUrls(ctx.config.publicBaseUrl, provider).redirect,
        at: new Date().toISOString(),
        by: request.principal!.actorId,
      });
      // The start address and the callback find the state through the read model.
      await ctx.settle(result.position, ['connections']);
      return { authorize_url: consentStartUrl(ctx.config.publicBaseUrl, provider, result.providerUrl) };
    },
  );

  app.delete(
    '/users/:id/connections/:provider',
    {
      config: { auth: 'tenant', audit: 'connection.disconnected' },
      schema: {
        summary: 'Disconnect a provider (grant revoked best effort); with delete_data=true its data is erased too',
        tags: ['connections'],
        params: UserProvider,
        querystring: z.object({ delete_data: z.enum(['true', 'false']).optional().describe('true: erase the provider data after disconnecting (202 with the job)') }),
        response: withProblems({ 202: z.object({ job_id: Uuid }), 204: z.null() }),
      },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const { provider } = request.params;
      const descriptor = connectedProvider(provider);
      if (!descriptor) throw problems.unknownSlug('provider', provider, CONNECTED_SLUGS);
      const userId = await requireUser(ctx, tenantId, request.params.id);
      const by = request.principal!.actorId;
      const result = await disconnect(ctx.eventStore, { tenantId, userId, provider, reason: 'disconnected by the tenant', at: new Date().toISOString(), by });
      if (result.position) await ctx.settle(result.position, ['connections']);
      const current = await ctx.credentials.current(userId, provider, result);
      await ctx.credentials.remove(userId, provider);
      if (current) {
        const client = await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, tenantId, provider);
        if (client) {
          try {
            const tokens = JSON.parse(openValue(ctx.valueSealer, TOKEN_PURPOSE, connectionOwner(userId, provider), current.tokensSealed)) as TokenSet;
            await ctx.grants.revoke(descriptor.slug, client, { accessToken: tokens.accessToken, providerUserId: tokens.providerUserId ?? null });
          } catch {
            // Best effort (spec): tokens that no longer open simply expire at the provider.
          }
        }
      }
      if (request.query.delete_data === 'true') {
        const jobId = await startProviderErasure(ctx, { tenantId, userId, provider, by, connected: false });
        return reply.code(202).send({ job_id: jobId });
      }
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/users/:id/consents/history',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: "The user's consent events, newest first",
        tags: ['connections'],
        params: z.object({ id: z.string().describe('User id (uuid)') }),
        querystring: PageQuery,
        response: withProblems({ 200: pageOf(ConsentEvent) }),
      },
    },
    async (request) => {
      const userId = await requireUser(ctx, request.tenantId!, request.params.id);
      const scope = `consents:${userId}`;
      const after = request.query.cursor ? cursors.decode(request.query.cursor, scope) : null;
      const page = await listConsentHistory(ctx.readStore, userId, { after, limit: request.query.limit });
      return { data: page.items.map(toConsentEventView), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
