import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { EcgRecordingDoc } from '../../../projections/records/ecgProjection.js';
import { listEcgRecordings } from '../../../queries/records/listEcg.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { Metadata, RecordId, RecordProvenance, recordProvenanceOf } from './recordSchemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const EcgRecording = z
  .object({
    id: RecordId,
    start_date: DateTime,
    end_date: DateTime,
    classification: z.string().nullable().describe("The recording device's own label in its maker's vocabulary, passed through unchecked"),
    classification_value: z.number().nullable(),
    symptoms_status: z.string().nullable(),
    average_heart_rate: z.number().nullable().describe('count/min'),
    sampling_frequency_hz: z.number().nullable(),
    number_of_measurements: z.number().describe('Number of voltage samples (not part of the list form)'),
    metadata: Metadata,
    ...RecordProvenance,
  })
  .describe('ECG recording (list form, without voltages)');

export const toEcgRecording = (d: EcgRecordingDoc) => ({
  id: d.id,
  start_date: d.start_date,
  end_date: d.end_date,
  classification: d.classification,
  classification_value: d.classification_value,
  symptoms_status: d.symptoms_status,
  average_heart_rate: d.average_heart_rate,
  sampling_frequency_hz: d.sampling_frequency_hz,
  number_of_measurements: d.number_of_measurements,
  metadata: d.metadata,
  ...recordProvenanceOf(d),
});

/** GET /v1/users/{id}/ecg (spec "Reads": start, end bound start_date; order start_date then id; rule 4). */
export const ecgRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/ecg',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'ECG recordings without voltages, oldest first',
        description: 'Ordered by start_date, then id; start and end bound start_date. The list form carries no voltage samples.',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ ...WindowQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(EcgRecording) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('ecg', user.id, { start: q.start, end: q.end });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listEcgRecordings(ctx.readStore, { userId: user.id, window }, { after, limit: q.limit });
      return { data: page.items.map(toEcgRecording), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
