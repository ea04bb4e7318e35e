import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DateTime, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

const RuntimeStats = z
  .object({
    since: DateTime.describe('Start of the measurement window (service start or the last reset)'),
    event_loop_delay_ms: z.object({ p50: z.number(), p99: z.number(), max: z.number(), samples: z.number().int() }),
    rss_bytes: z.number().int(),
    max_rss_bytes: z.number().int().describe('Peak resident memory of the process, all threads'),
    heap_used_bytes: z.number().int(),
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
    async () => ctx.runtime.stats(),
  );

  app.post(
    '/v1/admin/runtime/reset',
    {
      config: { auth: 'admin', audit: 'runtime.reset' },
      schema: { summary: 'Start a new event-loop delay measurement window', tags: ['admin'], response: withProblems({ 200: RuntimeStats }) },
    },
    async () => {
      ctx.runtime.reset();
      return ctx.runtime.stats();
    },
  );
};
