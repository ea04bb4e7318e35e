import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { retryEtlJob } from '../../../commands/ingestion/retryEtlJob.js';
import type { EtlJobDoc } from '../../../projections/ingestion/etlJobsProjection.js';
import { getEtlJob } from '../../../queries/ingestion/getEtlJob.js';
import { listEtlJobs } from '../../../queries/ingestion/listEtlJobs.js';
import { problems } from '../problems.js';
import { Cursor, DateTime, pageOf, Uuid, withProblems } from '../schemas.js';
import { cursorScope } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const EtlJob = z
  .object({
    id: z.number().int(),
    user_id: Uuid,
    provider: z.string(),
    tier: z.string().describe('upload, sync or backfill'),
    status: z.enum(['parked', 'pending', 'running', 'done']),
    attempts: z.number().int().describe('Failed attempts since the job was queued or last retried'),
    error: z.string().nullable().describe('Error of the last failed attempt'),
    created_at: DateTime,
    next_attempt_at: DateTime.nullable(),
  })
  .describe('ETL job');

const toEtlJob = (d: EtlJobDoc) => ({
  id: d.id,
  user_id: d.user_id,
  provider: d.provider,
  tier: d.tier,
  status: d.status,
  attempts: d.attempts,
  error: d.error,
  created_at: d.created_at,
  next_attempt_at: d.next_attempt_at,
});

const JobParams = z.object({ job_id: z.string().regex(/^\d{1,15}$/, 'job_id is an integer').describe('ETL job id (integer)') });

/** Spec "Pipeline" and "ETL job": the tenant's ETL queue, and a retry of a parked job. */
export const pipelineRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/pipeline/etl-jobs',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'ETL jobs of one status, newest first',
        tags: ['pipeline'],
        querystring: z.object({
          status: z.enum(['parked', 'pending', 'running']).default('parked'),
          provider: z.string().min(1).optional(),
          limit: z.coerce.number().int().min(1).max(100).default(50).describe('Page size, 1 to 100 (default 50)'),
          cursor: Cursor.optional(),
        }),
        response: withProblems({ 200: pageOf(EtlJob) }, [400, 401, 403]),
      },
    },
    async (request) => {
      const q = request.query;
      const tenantId = request.tenantId!;
      const scope = cursorScope('etl-jobs', tenantId, { status: q.status, provider: q.provider ?? null });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listEtlJobs(ctx.readStore, { tenantId, status: q.status, ...(q.provider !== undefined ? { provider: q.provider } : {}) }, { after, limit: q.limit });
      return { data: page.items.map(toEtlJob), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );

  app.post(
    '/pipeline/etl-jobs/:job_id/retry',
    {
      config: { auth: 'tenant', audit: 'etl_job.retry' },
      schema: {
        summary: 'Retry a parked ETL job with a fresh set of attempts',
        tags: ['pipeline'],
        params: JobParams,
        response: withProblems({ 200: EtlJob }, [400, 401, 403, 404, 409]),
      },
    },
    async (request) => {
      const tenantId = request.tenantId!;
      const job = await getEtlJob(ctx.readStore, tenantId, Number(request.params.job_id));
      if (!job) throw problems.notFound('ETL job not found');
      // The job's stream is its upload stream; the decision checks tenant and status on the events.
      const result = await retryEtlJob(ctx.eventStore, job._id, tenantId, request.principal!.actorId);
      await ctx.settle(result.position, ['etl_jobs']);
      const after = await getEtlJob(ctx.readStore, tenantId, job.id);
      // Read before waking the worker, so the answer is the job as the retry left it (pending).
      ctx.etl.kick();
      return toEtlJob(after ?? job);
    },
  );
};
