import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SourcePrioritiesMap } from '../../../commands/users/setSourcePriorities.js';
import { previewSampleMerge, PREVIEW_MAX_ROWS } from '../../../queries/records/previewSampleMerge.js';
import { QUANTITY_CATALOG } from '../../catalog/quantityCatalog.js';
import { problems } from '../problems.js';
import { DateTime, TimeParam, withProblems } from '../schemas.js';
import { readableUser, UserParams, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

const MAX_SPAN_MS = 7 * 86_400_000;

const Body = z.object({
  priorities: SourcePrioritiesMap.describe('An order as PUT /v1/users/{id}/source-priorities takes it; nothing is saved'),
  // An enum, so the document lists the types (contracts §17) and a stranger's one is refused by the schema.
  type: z.enum(QUANTITY_CATALOG.map((q) => q.type) as [string, ...string[]]).describe('Quantity type of the catalog'),
  start: TimeParam('Inclusive: RFC 3339 time or YYYY-MM-DD (midnight UTC)'),
  end: TimeParam('Exclusive; at most 7 days after start'),
});

const Answer = z
  .object({
    type: z.string(),
    order: z.array(z.string()).describe('The source order the type gets under the previewed priorities, best first (the built-in order of its group fills in)'),
    records: z.array(
      z.object({
        id: z.number().int(),
        start_date: DateTime,
        end_date: DateTime,
        value: z.number(),
        unit: z.string(),
        provider: z.string(),
        source: z.string().nullable(),
        shown_now: z.boolean().describe('In the merged view now, under the saved order'),
        shown: z.boolean().describe('In the merged view under the previewed order'),
      }),
    ),
  })
  .describe('Merged view preview');

/**
 * POST /v1/users/{id}/source-priorities/preview: which samples of a type and window the merged view
 * would show under an order before it is saved (the console's Sources page). Reads only; the spec
 * names no such route, so it is ours (docs/console.md).
 */
export const sourcePriorityPreviewRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.post(
    '/users/:id/source-priorities/preview',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Preview the merged view of a type and window under a source order, without saving it',
        tags: ['users'],
        params: UserParams,
        body: Body,
        response: withProblems({ 200: Answer }),
      },
    },
    async (request) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const { priorities, type } = request.body;
      const window = windowOf(request.body);
      if (window.end! - window.start! > MAX_SPAN_MS) throw problems.badRequest('the window spans more than 7 days');
      const preview = await previewSampleMerge(ctx.readStore, { userId: user.id, type, start: window.start!, end: window.end!, priorities });
      if ('tooMany' in preview) throw problems.badRequest(`the window and its neighbourhood hold more than ${PREVIEW_MAX_ROWS} samples: preview a shorter window`);
      return { type, order: [...preview.order], records: preview.records };
    },
  );
};
