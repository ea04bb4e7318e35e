import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { userHasSamplesOfType } from '../../../queries/records/listSamples.js';
import { statsWindow } from '../../../queries/records/sampleStats.js';
import { sampleStatsJson, statsAnswerHead } from '../../../queries/records/sampleStatsJson.js';
import { findQuantityType } from '../../catalog/quantityCatalog.js';
import { AnswerBytes, sendAnswerBytes } from '../answerBytes.js';
import { problems } from '../problems.js';
import { TimeParam, withProblems } from '../schemas.js';
import { readableUser, UserParams, ViewQuery } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

const OffsetDateTime = z.string().describe('RFC 3339 date-time with the offset of tz');

export const StatsBucket = z
  .object({
    start: OffsetDateTime.describe('Start of the interval, with the offset of tz'),
    provider: z.string(),
    source: z.string(),
    unit: z.string(),
    count: z.number().int(),
    sum: z.number(),
    avg: z.number(),
    min: z.number(),
    max: z.number(),
  })
  .describe('One interval of one series (provider, source, unit)');

export const SampleStatistics = z
  .object({
    type: z.string(),
    interval: z.enum(['hour', 'day']),
    tz: z.string(),
    view: z.enum(['merged', 'all']),
    start: OffsetDateTime.describe('Start of the first interval (after widening)'),
    end: OffsetDateTime.describe('End of the last interval, exclusive (after widening)'),
    truncated: z.boolean().describe('True when the answer would hold more than 50000 buckets (series × intervals); buckets then hold the first 50000. Every sample in the window is counted'),
    buckets: z.array(StatsBucket),
  })
  .describe('Sample statistics');

/** GET /v1/users/{id}/samples/stats (spec "Reads" rule 2, "Sample statistics"). */
export const sampleStatsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/users/:id/samples/stats',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Statistics of one quantity type per hour or local day, one series per provider, source and unit',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({
          type: z.string().min(1).describe('Quantity type from the catalog'),
          start: TimeParam('Inclusive: RFC 3339 time or YYYY-MM-DD (midnight in tz); widened to the start of its interval'),
          end: TimeParam('Exclusive: RFC 3339 time or YYYY-MM-DD (midnight in tz); widened to the end of its interval'),
          interval: z.enum(['hour', 'day']).default('day'),
          tz: z.string().min(1).default('UTC').describe('IANA time zone; a day runs from local midnight to local midnight'),
          provider: z.string().min(1).optional().describe('Only samples that came through this provider'),
          ...ViewQuery,
        }),
        response: withProblems({ 200: SampleStatistics }),
      },
    },
    async (request, reply) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = statsWindow(q.start, q.end, q.interval, q.tz);
      if (!findQuantityType(q.type) && !(await userHasSamplesOfType(ctx.readStore, user.id, q.type))) {
        throw problems.badRequest(`type ${q.type} is not in the quantity catalog`);
      }
      const query = {
        userId: user.id,
        type: q.type,
        window,
        interval: q.interval,
        tz: q.tz,
        view: q.view,
        ...(q.provider !== undefined ? { provider: q.provider } : {}),
      };
      const answer = await sampleStatsJson(ctx.readStore, query);
      // Up to 50,000 buckets, written from the query's columns straight into the answer's bytes
      // (answerBytes.ts) and sent as they are, past the response serializer (the schema types the
      // object form; the same bytes as its compiled serializer, test/queries/records/sampleStatsJson.test.ts).
      const out = new AnswerBytes();
      out.write(statsAnswerHead(query, answer.truncated));
      answer.write((json) => out.write(json));
      out.write(']}');
      return sendAnswerBytes(reply.type('application/json; charset=utf-8'), out);
    },
  );
};
