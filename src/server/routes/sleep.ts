import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SleepPhaseDoc, SleepSessionDoc } from '../../../projections/records/sleepProjection.js';
import { getSleepSession, listSleepPhases, listSleepSessions } from '../../../queries/records/listSleep.js';
import { problems } from '../problems.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { int, integerIdParam, intOrNull, IsPrimarySource, Metadata, Provenance, provenanceOf, RecordId, RecordProvenance, recordProvenanceOf } from './recordSchemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, ViewQuery, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

const UNSTAGED = (what: string) => `${what}, seconds; null when the source reported no stages (only asleep or unspecified sleep), 0 when a staged night had none`;

export const SleepSession = z
  .object({
    id: RecordId,
    bedtime_start: DateTime,
    bedtime_end: DateTime,
    total_sleep_seconds: z.number().int().describe('Time asleep (all sleep phases), seconds'),
    deep_sleep_seconds: z.number().int().nullable().describe(UNSTAGED('Time in deep sleep')),
    rem_sleep_seconds: z.number().int().nullable().describe(UNSTAGED('Time in REM sleep')),
    light_sleep_seconds: z.number().int().nullable().describe(UNSTAGED('Time in light (core) sleep')),
    awake_seconds: z
      .number()
      .int()
      .nullable()
      .describe('Time awake between bedtime_start and bedtime_end, seconds; null when a source that reported no stages reported no awake time either'),
    sleep_score: z.number().nullable().describe("The provider's own score, when it gives one"),
    hrv_avg_ms: z.number().nullable().describe('Average heart rate variability during the session, ms'),
    resting_hr: z.number().nullable().describe('Resting heart rate, count/min'),
    respiratory_rate: z.number().nullable().describe('Breaths per minute'),
    spo2_avg: z.number().nullable().describe('Average oxygen saturation, %'),
    external_id: z.string().describe("The provider's own identifier"),
    is_primary_source: IsPrimarySource,
    metadata: Metadata,
    ...RecordProvenance,
  })
  .describe('Sleep session');

export const SleepPhase = z
  .object({
    id: RecordId,
    session_id: z.number().int().describe('Id of the sleep session'),
    phase: z.string().describe('deep, rem, light, awake, asleep (unspecified sleep) or in_bed'),
    start_date: DateTime,
    end_date: DateTime,
    duration_s: z.number().describe('end_date − start_date, seconds'),
    ...Provenance,
  })
  .describe('Sleep phase');

export const toSleepSession = (d: SleepSessionDoc & { primary: boolean }) => ({
  id: d.id,
  bedtime_start: d.bedtime_start,
  bedtime_end: d.bedtime_end,
  total_sleep_seconds: int(d.total_sleep_seconds),
  deep_sleep_seconds: intOrNull(d.deep_sleep_seconds),
  rem_sleep_seconds: intOrNull(d.rem_sleep_seconds),
  light_sleep_seconds: intOrNull(d.light_sleep_seconds),
  awake_seconds: intOrNull(d.awake_seconds),
  sleep_score: d.sleep_score,
  hrv_avg_ms: d.hrv_avg_ms,
  resting_hr: d.resting_hr,
  respiratory_rate: d.respiratory_rate,
  spo2_avg: d.spo2_avg,
  external_id: d.external_id,
  is_primary_source: d.primary,
  metadata: d.metadata,
  ...recordProvenanceOf(d),
});

export const toSleepPhase = (sessionId: number) => (d: SleepPhaseDoc) => ({
  id: d.id,
  session_id: sessionId,
  phase: d.phase,
  start_date: d.start_date,
  end_date: d.end_date,
  duration_s: d.duration_s,
  ...provenanceOf(d),
});

const SessionParams = UserParams.extend({ session_id: z.string().describe('Sleep session id (integer int64)') });

/** GET /v1/users/{id}/sleep and …/sleep/{session_id}/phases (spec "Reads"). */
export const sleepRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/sleep',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Sleep sessions, oldest first',
        description:
          'Ordered by bedtime_start, then id; start and end bound bedtime_start. In the merged view a session is listed only when no better ranked source has a session sharing at least half of the shorter one.',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ ...WindowQuery, ...ViewQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(SleepSession) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('sleep', user.id, { start: q.start, end: q.end, view: q.view });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listSleepSessions(ctx.readStore, { userId: user.id, window, view: q.view }, { after, limit: q.limit });
      return { data: page.items.map(toSleepSession), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );


  app.get(
    '/users/:id/sleep/:session_id/phases',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Phases of one sleep session, oldest first',
        description:
          "Ordered by start_date, then id; start and end bound start_date. An unknown session, another user's or another tenant's, is a 404.",
        tags: ['records'],
        params: SessionParams,
        querystring: z.object({ ...WindowQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(SleepPhase) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const sessionId = integerIdParam(request.params.session_id);
      const session = sessionId === null ? null : await getSleepSession(ctx.readStore, user.id, sessionId);
      if (!session) throw problems.notFound('sleep session not found');
      const window = windowOf(q);
      const scope = cursorScope('sleep-phases', user.id, { session_id: session.id, start: q.start, end: q.end });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listSleepPhases(ctx.readStore, { userId: user.id, sessionKey: session._id, window }, { after, limit: q.limit });
      return { data: page.items.map(toSleepPhase(session.id)), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
