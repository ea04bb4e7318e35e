import { Readable, pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Principal } from '../auth.js';
import { InFlightSlots } from '../inFlightSlots.js';
import { closeIfReaderStalls } from '../stalledTransfers.js';
import { userArchive } from '../../archive/userArchive.js';
import { problems } from '../problems.js';
import { withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

/** Lines gathered into chunks of about this many characters: one stream write per chunk, not per line. */
const CHUNK = 64 * 1024;
/** How long a user whose archive is being streamed is told to wait (an archive takes seconds to minutes). */
const USER_BUSY_RETRY_SECONDS = 30;

async function* ndjson(lines: AsyncIterable<unknown>): AsyncGenerator<string> {
  let chunk = '';
  for await (const line of lines) {
    chunk += `${JSON.stringify(line)}\n`;
    if (chunk.length >= CHUNK) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/**
 * GET /v1/me/archive (Authentication 3, contracts §11): the token's user downloads everything held
 * about them. Streamed: the archive is read page by page only as fast as gzip and the client take
 * it (Readable.from pulls the generator on demand, 64 KiB ahead), so memory does not grow with the
 * user's data, and the reading gives the event loop back between pages, so other requests are
 * answered while it runs. One archive per user at a time, ARCHIVES_IN_FLIGHT_PER_TENANT per tenant and ARCHIVES_IN_FLIGHT
 * in all (issue 20, contracts §18): 429 with Retry-After beyond. A reader that stops reading for
 * BODY_IDLE_TIMEOUT_S loses its slot: the response is destroyed.
 */
export const archiveRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  const slots = new InFlightSlots(ctx.config.archivesInFlight, ctx.config.archivesInFlightPerTenant, 1);

  app.get(
    '/me/archive',
    {
      config: { auth: 'user', scope: 'read' },
      schema: {
        summary: "The token's user's own archive: every record, every kind, as gzip NDJSON",
        description:
          'A user token with the `read` scope. One archive per user at a time, a few per tenant (ARCHIVES_IN_FLIGHT_PER_TENANT) and per instance (ARCHIVES_IN_FLIGHT): beyond, 429 with Retry-After. A reader that stops reading for BODY_IDLE_TIMEOUT_S is disconnected. One JSON object per line, each with a `kind` (quantity_sample, category_sample, sleep_session, sleep_phase, workout, workout_route_point, nutrition, daily_summary, ecg, hrv, rr_interval, menstrual_cycle, observation, time_tag); kind by kind, oldest first within a kind, every source. Content-Encoding: gzip.',
        tags: ['archive'],
        produces: ['application/x-ndjson'],
        response: withProblems({ 200: z.any().describe('gzip-compressed NDJSON') }, [401, 403, 429]),
      },
    },
    async (request, reply) => {
      // A user token with the read scope: checked with the credential (auth.ts).
      const p = request.principal as Extract<Principal, { kind: 'user' }>;
      const slot = slots.take(p.tenantId, p.userId);
      if (slot === 'user_busy') throw problems.tooManyRequests("this user's archive is already being streamed: one at a time; retry once it is done", USER_BUSY_RETRY_SECONDS);
      if (slot === 'tenant_full') throw problems.tooManyRequests(`at most ${slots.perTenant} archives of one tenant are streamed at once; retry shortly`, 5);
      if (slot === 'full') throw problems.tooManyRequests(`at most ${slots.limit} archives are streamed at once; retry shortly`, 5);
      // 'close' fires once the answer is sent, failed, abandoned by the client or cut because its reader stalled.
      reply.raw.once('close', () => slots.release(p.tenantId, p.userId));
      // contracts §18: a reader that stops reading loses the slot after BODY_IDLE_TIMEOUT_S.
      closeIfReaderStalls(reply.raw, ctx.config.bodyIdleTimeoutMs);
      const source = Readable.from(ndjson(userArchive(ctx.readStore, p.userId)), { objectMode: false, highWaterMark: CHUNK });
      const body = pipeline(source, createGzip(), (err) => {
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
