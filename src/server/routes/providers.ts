import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { removeProviderKeys } from '../../../commands/connections/removeProviderKeys.js';
import { replaceProviderKeys } from '../../../commands/connections/replaceProviderKeys.js';
import { listProviders } from '../../../queries/connections/listProviders.js';
import { getProviderKeys, resolveProviderClient } from '../../../queries/connections/providerKeys.js';
import { activeConnectionsOf } from '../../../queries/connections/listConnections.js';
import { markNeedsReauth } from '../../../commands/connections/markNeedsReauth.js';
import type { AppContext } from '../appContext.js';
import { CONNECTED_SLUGS, connectedProvider } from '../../catalog/providers.js';
import { problems } from '../problems.js';
import { DateTime, withProblems } from '../schemas.js';
import { adminLocation, type RouteOptions } from './routeOptions.js';

const ProviderEntry = z.object({
  slug: z.string(),
  name: z.string(),
  kind: z.enum(['oauth', 'push', 'device', 'import']),
  enabled: z.boolean().describe('oauth and push: the tenant has its own keys or the instance has client keys; device: always'),
  data_types: z.array(z.string()),
  retired: z.boolean().describe("The provider's API is turned down: connecting is refused (409), its connections need the successor (contracts §14)"),
  successor: z.string().nullable().describe('The provider that serves a retired provider\'s users now; null when none does or the provider is not retired'),
  history_days: z.number().int().positive().nullable().describe("How far back a first backfill can reach, in days, per the provider's documentation; null: no documented limit"),
  notes: z.string().nullable().describe("What a tenant should know before enabling the provider (its terms, its developer programme)"),
});

export const ProviderKeysAnswer = z
  .object({
    provider: z.string(),
    set: z.boolean(),
    status: z.enum(['active', 'error', 'not_set']),
    error: z.string().nullable(),
    client_id: z.string().nullable().describe('First and last four characters only'),
    keys: z.array(z.object({ name: z.string(), required: z.boolean(), secret: z.boolean(), set: z.boolean() })),
    urls: z.object({ redirect: z.string(), inbound: z.string() }),
    created_at: DateTime.nullable(),
    updated_at: DateTime.nullable(),
    updated_by: z.string().nullable(),
    reauth_required: z.number().int().optional().describe('Replace and remove only: connections set to needs_reauth'),
  })
  .describe('Tenant provider keys');

const KeysParams = z.object({ tenant_id: z.string().describe('Tenant id (uuid)'), provider: z.string().describe('Provider slug (oauth or push)') });
const KeysBody = z.object({
  keys: z.record(z.string().max(64), z.string().min(1).max(4096)).describe('Key name to value (CLIENT_ID, CLIENT_SECRET, and where the provider has them REGION, ENVIRONMENT); replaces all previous keys'),
});

/**
 * Spec "Connection": active connections made under another application than the one the
 * tenant's keys now name must consent again. Answers how many were set to needs_reauth.
 */
async function sendBackToConsent(ctx: AppContext, tenantId: string, provider: string): Promise<number> {
  const client = await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, tenantId, provider);
  const application = client?.application ?? null;
  let count = 0;
  let position = 0;
  for (const c of await activeConnectionsOf(ctx.readStore, tenantId, provider)) {
    if (c.application === application) continue;
    const r = await markNeedsReauth(ctx.eventStore, {
      userId: c.user_id,
      provider,
      reason: 'provider_keys_changed',
      error: 'the tenant provider keys now name another application',
      at: new Date().toISOString(),
      unlessApplication: application ?? undefined,
    });
    if (r.changed) count++;
    position = Math.max(position, r.position);
  }
  if (position) await ctx.settle(position, ['connections']);
  return count;
}

/** GET /v1/providers (contracts §7). */
export const providersRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/providers',
    {
      config: { auth: 'tenant' },
      schema: { summary: 'Connectors of this instance and how each works', tags: ['connections'], response: withProblems({ 200: z.object({ data: z.array(ProviderEntry) }) }, [401, 403]) },
    },
    async (request) => ({ data: await listProviders(ctx.readStore, ctx.valueSealer, ctx.config.providers, request.tenantId!) }),
  );
};

/**
 * The tenant's own provider keys (spec "Tenant provider keys", contracts §7), admin key only.
 * Values never leave: the answer says which keys are set and shows the client id masked.
 */
export const providerKeysRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  const resource = async (tenantId: string, provider: string) => {
    const found = await getProviderKeys(ctx.readStore, ctx.valueSealer, ctx.config.publicBaseUrl, tenantId, provider);
    if (!found) throw problems.unknownSlug('provider', provider, CONNECTED_SLUGS);
    return found;
  };
  const known = (provider: string) => {
    if (!connectedProvider(provider)) throw problems.unknownSlug('provider', provider, CONNECTED_SLUGS);
  };

  app.get(
    '/providers/:provider/keys',
    { config: { auth: 'admin' }, schema: { summary: "A tenant's own keys for a provider (values never shown)", tags: ['connections'], params: KeysParams, response: withProblems({ 200: ProviderKeysAnswer }) } },
    async (request) => resource(request.tenantId!, request.params.provider),
  );

  app.put(
    '/providers/:provider/keys',
    {
      config: { auth: 'admin', audit: 'tenant.provider_keys' },
      schema: {
        summary: "Set a tenant's own keys for a provider",
        description: 'Missing required keys: 400. Keys the provider would refuse: 422 with the reason, nothing stored. Connections made under another application are set to needs_reauth.',
        tags: ['connections'],
        params: KeysParams,
        body: KeysBody,
        response: withProblems({ 200: ProviderKeysAnswer }, [400, 401, 403, 404, 422]),
      },
    },
    async (request, reply) => {
      const { provider } = request.params;
      known(provider);
      const tenantId = request.tenantId!;
      const result = await replaceProviderKeys(ctx.eventStore, ctx.valueSealer, { tenantId, provider, keys: request.body.keys, at: new Date().toISOString(), by: request.principal!.actorId });
      // Effective at once in this process: the next connect reads the new keys, the next webhook opens them.
      await ctx.settle(result.position, ['provider_keys']);
      ctx.webhookApplications.invalidate();
      const reauthRequired = await sendBackToConsent(ctx, tenantId, provider);
      reply.header('location', adminLocation(tenantId, `/providers/${provider}/keys`));
      return { ...(await resource(tenantId, provider)), reauth_required: reauthRequired };
    },
  );

  app.delete(
    '/providers/:provider/keys',
    {
      config: { auth: 'admin', audit: 'tenant.provider_keys' },
      schema: { summary: "Remove a tenant's own keys for a provider (the instance's keys apply again)", tags: ['connections'], params: KeysParams, response: withProblems({ 200: ProviderKeysAnswer }) },
    },
    async (request, reply) => {
      const { provider } = request.params;
      known(provider);
      const tenantId = request.tenantId!;
      const result = await removeProviderKeys(ctx.eventStore, { tenantId, provider, at: new Date().toISOString(), by: request.principal!.actorId });
      if (result.position) await ctx.settle(result.position, ['provider_keys']);
      ctx.webhookApplications.invalidate();
      const reauthRequired = await sendBackToConsent(ctx, tenantId, provider);
      reply.header('location', adminLocation(tenantId, `/providers/${provider}/keys`));
      return { ...(await resource(tenantId, provider)), reauth_required: reauthRequired };
    },
  );
};
