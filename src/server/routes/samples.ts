import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SampleDoc } from '../../../projections/records/samplesProjection.js';
import { readSamplesPage, userHasSamplesOfType } from '../../../queries/records/listSamples.js';
import { AnswerBytes, sendAnswerBytes } from '../answerBytes.js';
import { findQuantityType } from '../../catalog/quantityCatalog.js';
import { problems } from '../problems.js';
import { RecordProvenance, sampleFieldsOf, SampleOrigin } from './recordSchemas.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, ViewQuery, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';
import type { RenderTemplate } from '../../readstore/renderedRows.js';

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

/**
 * toQuantitySample as a rendering template (src/readstore/renderedRows.ts): the page is written
 * from the stored rows without building documents. Same keys in the same order as QuantitySample,
 * same bytes as the compiled serializer writes of toQuantitySample (test/server/samplesJsonPage.test.ts).
 */
export const QUANTITY_SAMPLE_JSON: RenderTemplate = [
  { key: 'id', field: 'id', as: 'value' },
  { key: 'type', field: 'type', as: 'string' },
  { key: 'value', field: 'value', as: 'value' },
  { key: 'unit', field: 'unit', as: 'string' },
  { key: 'start_date', field: 'start_date', as: 'string' },
  { key: 'end_date', field: 'end_date', as: 'string' },
  { key: 'source_name', field: 'source_name', as: 'string' },
  { key: 'source_bundle_id', field: 'source_bundle_id', as: 'string' },
  { key: 'device_model', field: 'device_model', as: 'string' },
  { key: 'product_type', field: 'product_type', as: 'string' },
  { key: 'external_id', field: 'external_id', as: 'string' },
  { key: 'is_primary_source', field: 'hidden', as: 'notTrue' },
  { key: 'was_user_entered', field: 'was_user_entered', as: 'boolean' },
  { key: 'metadata', field: 'metadata', as: 'value' },
  { key: 'provider', field: 'provider', as: 'string' },
  { key: 'source', field: 'source', as: 'string' },
  { key: 'device', field: 'device', as: 'string' },
  { key: 'ingested_at', field: 'ingested_at', as: 'string' },
  { key: 'quality', field: 'quality', as: 'value', missing: '[]' },
];

/** GET /v1/users/{id}/samples (spec "Reads", rule 1). */
export const samplesRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/samples',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Quantity samples of one type, oldest first',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ type: z.string().min(1).describe('Quantity type from the catalog'), ...WindowQuery, ...ViewQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(QuantitySample) }),
      },
    },
    async (request, reply) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      if (!findQuantityType(q.type) && !(await userHasSamplesOfType(ctx.readStore, user.id, q.type))) {
        throw problems.badRequest(`type ${q.type} is not in the quantity catalog`);
      }
      const scope = cursorScope('samples', user.id, { type: q.type, start: q.start, end: q.end, view: q.view });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await readSamplesPage(ctx.readStore, { userId: user.id, type: q.type, window, view: q.view }, QUANTITY_SAMPLE_JSON, { after, limit: q.limit });
      // Pages of up to 1,000 samples, written from the stored rows (QUANTITY_SAMPLE_JSON) straight into
      // the answer's bytes (answerBytes.ts): sent as they are, past the response serializer (the
      // schema types the object form).
      const next = JSON.stringify(page.next ? cursors.encode(page.next, scope) : null);
      const out = new AnswerBytes();
      out.write('{"data":[');
      page.write((s) => out.write(s));
      out.write(`],"next_cursor":${next}}`);
      return sendAnswerBytes(reply.type('application/json; charset=utf-8'), out);
    },
  );
};
