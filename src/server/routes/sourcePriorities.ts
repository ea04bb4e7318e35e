import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { setSourcePriorities, SourcePrioritiesMap } from '../../../commands/users/setSourcePriorities.js';
import { MERGED_VIEW_PROJECTIONS } from '../../../projections/index.js';
import { getSourcePriorities } from '../../../queries/users/getSourcePriorities.js';
import { UUID_RE } from '../../shared/ids.js';
import { problems } from '../problems.js';
import { DateTime, withProblems } from '../schemas.js';
import { UserParams } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const SourcePrioritiesAnswer = z
  .object({
    priorities: z.record(z.string(), z.array(z.string())).describe('Sources best first, keyed by quantity or category type, group or *'),
    updated_at: DateTime.nullable().describe('When the order was last set; null before any PUT'),
  })
  .describe('Source priorities');

const Body = z.object({
  priorities: SourcePrioritiesMap.describe(
    'Keys: a quantity type of the catalog (heart_rate), a category type (sleep_analysis), a group (activity, heart, recovery, body, sleep, workouts) or *. ' +
      'The order for a record is the one of its metric, else of its group, else of *, else the built-in order. Replaces the whole order.',
  ),
});

/**
 * The user's order of sources (spec "Source order", contracts §6). The PUT answers once the users
 * read model holds the new order, so every read answered after it ranks by it
 * (docs/read-your-writes.md).
 */
export const sourcePrioritiesRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/users/:id/source-priorities',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: "The user's order of sources for the merged view",
        tags: ['users'],
        params: UserParams,
        response: withProblems({ 200: SourcePrioritiesAnswer }),
      },
    },
    async (request) => {
      // Another tenant's, a missing or a deleting user: 404 (spec Conventions 6, "Reads" rule 6).
      const id = request.params.id;
      const answer = UUID_RE.test(id) ? await getSourcePriorities(ctx.readStore, request.tenantId!, id.toLowerCase()) : null;
      if (!answer) throw problems.notFound('user not found');
      return answer;
    },
  );

  app.put(
    '/users/:id/source-priorities',
    {
      config: { auth: 'tenant', audit: 'user.source_priorities_set' },
      schema: {
        summary: "Replace the user's order of sources for the merged view",
        tags: ['users'],
        params: UserParams,
        body: Body,
        response: withProblems({ 200: SourcePrioritiesAnswer }),
      },
    },
    async (request) => {
      if (!UUID_RE.test(request.params.id)) throw problems.notFound('user not found');
      const at = new Date().toISOString();
      const result = await setSourcePriorities(ctx.eventStore, {
        tenantId: request.tenantId!,
        userId: request.params.id.toLowerCase(),
        priorities: request.body.priorities,
        at,
        by: request.principal!.actorId,
      });
      // The record projections re-evaluate their merged flags (and the samples' rollups) under the
      // new order: reads answered after this one already use it (contracts §6).
      await ctx.settle(result.position, ['users', ...MERGED_VIEW_PROJECTIONS]);
      return { priorities: request.body.priorities, updated_at: at };
    },
  );
};
