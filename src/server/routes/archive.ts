import { Readable, pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { userArchive } from '../../archive/userArchive.js';
import { problems } from '../problems.js';
import { withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

async function* ndjson(lines: AsyncIterable<unknown>): AsyncGenerator<string> {
  for await (const line of lines) yield `${JSON.stringify(line)}\n`;
}

/**
 * GET /v1/me/archive (Authentication 3, contracts §11): the token's user downloads everything held
 * about them. Streamed: the archive is read page by page only as fast as gzip and the client take
 * it (Readable.from pulls the generator on demand), so memory does not grow with the user's data.
 */
export const archiveRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/me/archive',
    {
      config: { auth: 'user' },
      schema: {
        summary: "The token's user's own archive: every record, every kind, as gzip NDJSON",
        description:
          'A user token with the `read` scope. One JSON object per line, each with a `kind` (quantity_sample, category_sample, sleep_session, sleep_phase, workout, workout_route_point, nutrition, daily_summary, ecg, hrv, rr_interval, menstrual_cycle, observation, time_tag); kind by kind, oldest first within a kind, every source. Content-Encoding: gzip.',
        tags: ['archive'],
        produces: ['application/x-ndjson'],
        response: withProblems({ 200: z.any().describe('gzip-compressed NDJSON') }, [401, 403]),
      },
    },
    async (request, reply) => {
      const p = request.principal;
      if (p?.kind !== 'user' || !p.scopes.includes('read')) throw problems.forbidden('the archive needs a user token with the read scope');
      const body = pipeline(Readable.from(ndjson(userArchive(ctx.readStore, p.userId))), createGzip(), (err) => {
        // Headers are gone by then: the client sees a truncated gzip stream, never a partial archive passed off as whole.
        if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') request.log.error({ err }, 'archive stream failed');
      });
      return reply
        .header('content-type', 'application/x-ndjson')
        .header('content-encoding', 'gzip')
        .header('content-disposition', 'attachment; filename="archive.ndjson.gz"')
        .header('cache-control', 'no-store')
        .send(body);
    },
  );
};
