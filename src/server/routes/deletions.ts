import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getDeletionJob } from '../../../queries/deletions/getDeletionJob.js';
import { UUID_RE } from '../../shared/ids.js';
import { problems } from '../problems.js';
import { DateTime, Uuid, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

export const DeletionJob = z
  .object({
    job_id: Uuid,
    user_id: Uuid,
    provider: z.string().nullable(),
    status: z.enum(['pending', 'running', 'done', 'failed']),
    created_at: DateTime,
    finished_at: DateTime.nullable(),
    error: z.string().optional().describe('Only on a failed job: why it failed (it did not finish in time, the step it was at, its last error)'),
  })
  .describe('Deletion job');

/** Spec "Deletion job": readable after its user is gone; another tenant's job is a 404. */
export const deletionsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/deletions/:job_id',
    {
      config: { auth: 'tenant' },
      schema: { summary: 'Get a deletion job', tags: ['users'], params: z.object({ job_id: z.string() }), response: withProblems({ 200: DeletionJob }) },
    },
    async (request) => {
      const job = UUID_RE.test(request.params.job_id) ? await getDeletionJob(ctx.readStore, request.tenantId!, request.params.job_id.toLowerCase()) : null;
      if (!job) throw problems.notFound('deletion job not found');
      const { job_id, user_id, provider, status, created_at, finished_at } = job;
      return { job_id, user_id, provider, status, created_at, finished_at, ...(status === 'failed' ? { error: job.error ?? 'unknown' } : {}) };
    },
  );
};
