import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RejectedRecordDoc } from '../../../projections/ingestion/rejectedRecordsProjection.js';
import { listRejectedRecords } from '../../../queries/ingestion/listRejectedRecords.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const RejectedRecord = z
  .object({
    provider: z.string(),
    location: z.string().describe('Where in the upload or payload the record was (line number, table and row, record index)'),
    reason: z.string().describe('Why the ETL could not store it'),
    excerpt: z.string().describe('The start of the rejected line or object, as sent'),
    rejected_at: DateTime.describe('When the ETL job that last rejected it ran'),
  })
  .describe('Rejected record');

const toRejectedRecord = (d: RejectedRecordDoc) => ({ provider: d.provider, location: d.location, reason: d.reason, excerpt: d.excerpt, rejected_at: d.at });

/**
 * GET /v1/users/{id}/rejected-records: the records coverage counts as `rejected_records`, with their
 * reasons (contracts §3 keeps them "for inspection"; the spec names no read route, so this one is ours).
 */
export const rejectedRecordsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/rejected-records',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: "Lines and objects of the user's uploads and pulls the ETL could not store, newest first",
        tags: ['pipeline'],
        params: UserParams,
        querystring: z.object({ provider: z.string().min(1).max(64).optional(), ...PagingQuery }),
        response: withProblems({ 200: pageOf(RejectedRecord) }),
      },
    },
    async (request) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const q = request.query;
      const scope = cursorScope('rejected-records', user.id, { provider: q.provider ?? null });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listRejectedRecords(ctx.readStore, { userId: user.id, ...(q.provider !== undefined ? { provider: q.provider } : {}) }, { after, limit: q.limit });
      return { data: page.items.map(toRejectedRecord), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
