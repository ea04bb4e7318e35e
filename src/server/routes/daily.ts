import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DailySummaryDoc } from '../../../projections/records/dailySummariesProjection.js';
import { listDailySummaries } from '../../../queries/records/listDailySummaries.js';
import { pageOf, withProblems } from '../schemas.js';
import { IsPrimarySource, Metadata, RecordId, RecordProvenance, recordProvenanceOf } from './recordSchemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, ViewQuery, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const DailySummary = z
  .object({
    id: RecordId,
    date: z.string().describe('Calendar date of the summary, YYYY-MM-DD (the local day of the provider)'),
    steps: z.number().nullable(),
    active_energy_kcal: z.number().nullable(),
    distance_m: z.number().nullable(),
    resting_heart_rate: z.number().nullable().describe('count/min'),
    avg_heart_rate: z.number().nullable().describe('count/min'),
    sleep_seconds: z.number().nullable(),
    external_id: z.string().describe("The provider's own identifier"),
    is_primary_source: IsPrimarySource,
    metadata: Metadata,
    ...RecordProvenance,
  })
  .describe('Daily summary (one per provider and date)');

export const toDailySummary = (d: DailySummaryDoc & { primary: boolean }) => ({
  id: d.id,
  date: d.date,
  steps: d.steps,
  active_energy_kcal: d.active_energy_kcal,
  distance_m: d.distance_m,
  resting_heart_rate: d.resting_heart_rate,
  avg_heart_rate: d.avg_heart_rate,
  sleep_seconds: d.sleep_seconds,
  external_id: d.external_id,
  is_primary_source: d.primary,
  metadata: d.metadata,
  ...recordProvenanceOf(d),
});

/** GET /v1/users/{id}/daily (spec "Reads": start, end compared as dates, view; order date). */
export const dailyRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/daily',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Daily summaries, oldest first',
        description:
          'Ordered by date, then id. start and end are compared as dates (their UTC date): dates from the date of start, inclusive, to the date of end, exclusive. In the merged view a summary is listed only when no better ranked source has a summary of the same date (a day total overlaps the whole day).',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ ...WindowQuery, ...ViewQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(DailySummary) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('daily', user.id, { start: q.start, end: q.end, view: q.view });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listDailySummaries(ctx.readStore, { userId: user.id, window, view: q.view }, { after, limit: q.limit });
      return { data: page.items.map(toDailySummary), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
