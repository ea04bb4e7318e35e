import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { coverageReport } from '../../../queries/records/coverage.js';
import { DateTime, TimeParam, withProblems } from '../schemas.js';
import { readableUser, UserParams, ViewQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const CoverageDay = z
  .object({
    provider: z.string(),
    date: z.string().describe('YYYY-MM-DD (UTC day of the records, a daily summary its own date)'),
    records: z.number().int(),
    metrics: z.record(z.string(), z.number().int()).describe('Records per metric: a sample type, or a record kind such as sleep_sessions'),
    last_synced_at: DateTime.describe('Latest ingestion of the provider’s records of that day'),
  })
  .describe('Coverage of one provider on one day');

export const CoverageReport = z
  .object({
    pending_jobs: z.number().int().describe('Unfinished ETL jobs (pending or running)'),
    parked_jobs: z.number().int().describe('ETL jobs that used up their retries'),
    rejected_records: z.number().int().describe('Lines the ETL could not store, each once; every provider and day'),
    flagged_records: z
      .number()
      .int()
      .describe('Records stored but left out of the merged view and statistics by their quality flags (implausible_value, implausible_duration, future); every provider and day'),
    truncated: z.boolean().describe('True when more than 10000 days matched; days then hold the earliest'),
    days: z.array(CoverageDay),
  })
  .describe('Coverage report');

/** GET /v1/users/{id}/coverage (spec "Reads" rule 3, "Coverage report"). */
export const coverageRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/users/:id/coverage',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Records per provider per day, with the ETL queue of the user',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({
          provider: z.string().min(1).optional(),
          start: TimeParam('Inclusive: RFC 3339 time or YYYY-MM-DD; days from the day of start').optional(),
          end: TimeParam('Exclusive: RFC 3339 time or YYYY-MM-DD; days starting before end').optional(),
          ...ViewQuery,
        }),
        response: withProblems({ 200: CoverageReport }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      return coverageReport(ctx.readStore, { userId: user.id, window, view: q.view, ...(q.provider !== undefined ? { provider: q.provider } : {}) });
    },
  );
};
