import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DateTime, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';
import { listStalls } from '../../projector/projectionStalls.js';
import type { AppContext } from '../appContext.js';

const RuntimeStats = z
  .object({
    since: DateTime.describe('Start of the measurement window (service start or the last reset)'),
    event_loop_delay_ms: z.object({ p50: z.number(), p99: z.number(), max: z.number(), samples: z.number().int() }),
    rss_bytes: z.number().int(),
    max_rss_bytes: z.number().int().describe('Peak resident memory of the process, all threads'),
    heap_used_bytes: z.number().int(),
    projection_stalls: z
      .array(
        z.object({
          projection: z.string(),
          state: z.enum(['waiting', 'stopped']).describe('waiting: its store fails for a while and the batch is retried; stopped: an erasure event fails on every attempt'),
          kind: z.string().describe('busy, full, io, network, failover; erasure when stopped'),
          position: z.number().int().describe('Its checkpoint'),
          since: DateTime,
          retries: z.number().int().describe('Retries since the stall began'),
          error: z.string(),
        }),
      )
      .describe('Projections that cannot move on now, in every process sharing the stores (contracts §19); empty when all can'),
  })
  .describe('Runtime statistics');

/** How the service process keeps up: event-loop delay of the HTTP thread and memory. Instance admin only. */
export const adminRuntimeRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/v1/admin/runtime',
    {
      config: { auth: 'admin' },
      schema: { summary: 'Event-loop delay and memory of this service process', tags: ['admin'], response: withProblems({ 200: RuntimeStats }) },
    },
    async () => withStalls(ctx),
  );

  app.post(
    '/v1/admin/runtime/reset',
    {
      config: { auth: 'admin', audit: 'runtime.reset' },
      schema: { summary: 'Start a new event-loop delay measurement window', tags: ['admin'], response: withProblems({ 200: RuntimeStats }) },
    },
    async () => {
      ctx.runtime.reset();
      return withStalls(ctx);
    },
  );
};

async function withStalls(ctx: AppContext) {
  const stalls = [...(await listStalls(ctx.readStore)).values()].map(({ projection, state, kind, position, since, retries, error }) => ({ projection, state, kind, position, since, retries, error }));
  return { ...ctx.runtime.stats(), projection_stalls: stalls };
}
