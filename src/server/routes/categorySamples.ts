import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { CategorySampleDoc } from '../../../projections/records/categorySamplesProjection.js';
import { listCategorySamples } from '../../../queries/records/listCategorySamples.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { IsPrimarySource, Metadata, RecordId, RecordProvenance, sampleFieldsOf, SampleOrigin } from './recordSchemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, ViewQuery, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const CategorySample = z
  .object({
    id: RecordId,
    type: z.string().describe('Canonical category type, e.g. sleep_analysis, menstrual_flow, mindful_session'),
    value: z.string().describe("Canonical value, e.g. asleep_deep, medium (the provider's own value stays in metadata)"),
    start_date: DateTime,
    end_date: DateTime,
    ...SampleOrigin,
    external_id: z.string().describe("The provider's own identifier"),
    is_primary_source: IsPrimarySource,
    was_user_entered: z.boolean(),
    metadata: Metadata,
    ...RecordProvenance,
  })
  .describe('Category sample');

export const toCategorySample = (d: CategorySampleDoc & { primary: boolean }) => ({ id: d.id, type: d.type, value: d.value, ...sampleFieldsOf(d) });

/** GET /v1/users/{id}/category-samples (spec "Reads": type optional, start, end, view; order start_date). */
export const categorySamplesRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/category-samples',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Category samples, oldest first',
        description:
          'Ordered by start_date, then id; start and end bound start_date. In the merged view a sample is listed only when no better ranked source has an overlapping sample of the same type.',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({
          type: z.string().min(1).optional().describe('Category type (e.g. sleep_analysis); all types when absent'),
          ...WindowQuery,
          ...ViewQuery,
          ...PagingQuery,
        }),
        response: withProblems({ 200: pageOf(CategorySample) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('category-samples', user.id, { type: q.type ?? null, start: q.start, end: q.end, view: q.view });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listCategorySamples(ctx.readStore, { userId: user.id, type: q.type, window, view: q.view }, { after, limit: q.limit });
      return { data: page.items.map(toCategorySample), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
