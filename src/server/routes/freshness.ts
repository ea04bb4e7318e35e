import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getFreshness } from '../../../queries/users/getFreshness.js';
import { connectionFacts } from '../../../queries/connections/listConnections.js';
import { DateTime, withProblems } from '../schemas.js';
import { readableUser, UserParams } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const FreshnessEntry = z
  .object({
    provider: z.string().describe('Provider slug'),
    kind: z.enum(['oauth', 'push', 'device', 'import']),
    state: z
      .enum(['disconnected', 'needs_reauth', 'syncing', 'failing', 'stale', 'fresh'])
      .describe('First that holds: disconnected, needs_reauth, syncing (a job queued or running), failing (a job parked or waiting for a retry), stale (nothing received for 48 hours), fresh'),
    synced_through: DateTime.nullable().describe('End of the latest record received from the provider'),
    lag_seconds: z.number().int().nullable().describe('Now minus synced_through, whole seconds'),
    last_received_at: DateTime.nullable().describe('When the last upload or pull that stored records finished'),
    last_notification_at: DateTime.nullable().describe('Last notification from the provider (push providers; null for devices)'),
    next_pull_at: DateTime.nullable().describe('Next scheduled pull (oauth providers; null for devices)'),
    last_error: z.string().nullable().describe('Error of the last failed job; null when healthy'),
  })
  .describe('Freshness of a source');

/** GET /v1/users/{id}/freshness (spec "Connections", "Freshness of a source"; contracts §6). Rules: docs/freshness.md. */
export const freshnessRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/users/:id/freshness',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Freshness of each source of the user: how far its data reaches, and whether it syncs',
        tags: ['records'],
        params: UserParams,
        response: withProblems({ 200: z.object({ data: z.array(FreshnessEntry) }) }),
      },
    },
    async (request) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      return { data: await getFreshness(ctx.readStore, user.id, { connections: await connectionFacts(ctx.readStore, request.tenantId!, user.id, ctx.sync.pullSchedule()) }) };
    },
  );
};
