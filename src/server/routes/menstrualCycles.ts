import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { MenstrualCycleDoc } from '../../../projections/records/menstrualCyclesProjection.js';
import { listMenstrualCycles } from '../../../queries/records/listMenstrualCycles.js';
import { pageOf, withProblems } from '../schemas.js';
import { Metadata, RecordId, RecordProvenance, recordProvenanceOf } from './recordSchemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

const CalendarDate = z.string().describe('YYYY-MM-DD');

export const MenstrualCycle = z
  .object({
    id: RecordId,
    start_date: CalendarDate.describe('First day of bleeding, YYYY-MM-DD'),
    period_end_date: CalendarDate.nullable().describe('Last day of the period, YYYY-MM-DD; null while ongoing'),
    period_length_days: z.number().nullable(),
    cycle_length_days: z.number().nullable().describe("Days to the next cycle's start; null for the latest cycle"),
    flow: z.record(z.string(), z.string()).describe('Flow per day of the period, keyed by date (YYYY-MM-DD)'),
    external_id: z.string().describe("The provider's own identifier"),
    metadata: Metadata,
    ...RecordProvenance,
  })
  .describe('Menstrual cycle');

export const toMenstrualCycle = (d: MenstrualCycleDoc) => ({
  id: d.id,
  start_date: d.start_date,
  period_end_date: d.period_end_date,
  period_length_days: d.period_length_days,
  cycle_length_days: d.cycle_length_days,
  flow: d.flow,
  external_id: d.external_id,
  metadata: d.metadata,
  ...recordProvenanceOf(d),
});

/** GET /v1/users/{id}/menstrual-cycles (spec "Reads": start, end compared as dates on the cycle's start). */
export const menstrualCyclesRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/menstrual-cycles',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Menstrual cycles, oldest first',
        description:
          "Ordered by start_date, then id. start and end are compared as dates with the cycle's start_date: from the date of start, inclusive, to the date of end, exclusive.",
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ ...WindowQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(MenstrualCycle) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('menstrual-cycles', user.id, { start: q.start, end: q.end });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listMenstrualCycles(ctx.readStore, { userId: user.id, window }, { after, limit: q.limit });
      return { data: page.items.map(toMenstrualCycle), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
