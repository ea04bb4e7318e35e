import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SampleDoc } from '../../../projections/records/samplesProjection.js';
import { listSamples, userHasSamplesOfType } from '../../../queries/records/listSamples.js';
import { findQuantityType } from '../../catalog/quantityCatalog.js';
import { compiledSerializerCompiler } from '../compiledSerializer.js';
import { problems } from '../problems.js';
import { RecordProvenance, sampleFieldsOf, SampleOrigin } from './recordSchemas.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, ViewQuery, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const QuantitySample = z
  .object({
    id: z.number().int(),
    type: z.string(),
    value: z.number(),
    unit: z.string().describe('Storage unit of the type'),
    start_date: DateTime,
    end_date: DateTime,
    ...SampleOrigin,
    external_id: z.string(),
    is_primary_source: z.boolean().describe('True when the merged view lists this record'),
    was_user_entered: z.boolean(),
    metadata: z.record(z.string(), z.unknown()).describe('Provider fields as sent, plus timezone, original_value, original_unit'),
    ...RecordProvenance,
  })
  .describe('Quantity sample');

export const toQuantitySample = (d: SampleDoc & { primary: boolean }) => ({ id: d.id, type: d.type, value: d.value, unit: d.unit, ...sampleFieldsOf(d) });

/** GET /v1/users/{id}/samples (spec "Reads", rule 1). */
export const samplesRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/samples',
    {
      config: { auth: 'tenant' },
      // Pages of up to 1,000 samples: written by a compiled serializer (compiledSerializer.ts).
      serializerCompiler: compiledSerializerCompiler,
      schema: {
        summary: 'Quantity samples of one type, oldest first',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ type: z.string().min(1).describe('Quantity type from the catalog'), ...WindowQuery, ...ViewQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(QuantitySample) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      if (!findQuantityType(q.type) && !(await userHasSamplesOfType(ctx.readStore, user.id, q.type))) {
        throw problems.badRequest(`type ${q.type} is not in the quantity catalog`);
      }
      const scope = cursorScope('samples', user.id, { type: q.type, start: q.start, end: q.end, view: q.view });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listSamples(ctx.readStore, { userId: user.id, type: q.type, window, view: q.view }, { after, limit: q.limit });
      return { data: page.items.map(toQuantitySample), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
