import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { HeartbeatSeriesDoc } from '../../../projections/records/heartbeatSeriesProjection.js';
import { getHeartbeatSeries, listHrv, listRrIntervals, seriesIdsByKey } from '../../../queries/records/listHeartbeat.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { Window } from '../../../queries/records/window.js';
import type { PageRequest } from '../../../queries/shared/page.js';
import { Provenance, provenanceOf, RecordProvenance, recordProvenanceOf } from './recordSchemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

const SeriesIdQuery = {
  series_id: z.coerce
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe('Only this heartbeat series (integer id, as in the hrv list); an id the user has no series of lists nothing'),
};

export const RrInterval = z
  .object({
    series_id: z.number().int().describe('Id of the heartbeat series'),
    timestamp: DateTime.describe('Time of the beat (RFC 3339, UTC): the series start plus the beat offset'),
    rr_ms: z
      .number()
      .nullable()
      .describe('Time since the previous beat (the RR interval ending at this beat), ms; null for the first beat of a series and for a beat preceded by a gap'),
    preceded_by_gap: z.boolean().describe('True when data is missing before this beat'),
    ...Provenance,
  })
  .describe('RR interval (one row per beat)');

export const Hrv = z
  .object({
    series_id: z.number().int().describe('Id of the heartbeat series'),
    start_date: DateTime.describe('Time of the first beat (RFC 3339, UTC)'),
    end_date: DateTime.describe('End of the series (RFC 3339, UTC)'),
    beats: z.number().int().describe('Number of beats in the series'),
    rmssd_ms: z
      .number()
      .nullable()
      .describe('Root mean square of successive RR differences, sqrt(mean((RR[i] − RR[i−1])²)) over RR intervals of adjacent beats; null with fewer than 2 RR intervals'),
    sdnn_ms: z
      .number()
      .nullable()
      .describe('Population standard deviation of the RR intervals, sqrt(mean((RR − mean RR)²)); null with fewer than 3 RR intervals'),
    ...RecordProvenance,
  })
  .describe('Heart rate variability of one heartbeat series. RR intervals exclude those ending at a beat preceded by a gap.');

export const toHrv = (d: HeartbeatSeriesDoc) => ({
  series_id: d.id,
  start_date: d.first_beat,
  end_date: d.end_date,
  beats: d.beats,
  rmssd_ms: d.rmssd_ms,
  sdnn_ms: d.sdnn_ms,
  ...recordProvenanceOf(d),
});

/** A page of RR intervals with their series id: shared by the REST list and the agent interface. */
export async function rrIntervalPage(readStore: ReadStore, userId: string, seriesId: number | undefined, window: Window, page: PageRequest) {
  let seriesKey: string | undefined;
  if (seriesId !== undefined) {
    const series = await getHeartbeatSeries(readStore, userId, seriesId);
    if (!series) return { items: [], next: null };
    seriesKey = series._id;
  }
  const rows = await listRrIntervals(readStore, { userId, seriesKey, window }, page);
  const ids = await seriesIdsByKey(
    readStore,
    userId,
    rows.items.map((r) => r.series_key),
  );
  const items = rows.items.flatMap((r) => {
    const id = ids.get(r.series_key);
    // A beat whose series row is not (yet) visible is left out rather than answered without its series.
    if (id === undefined) return [];
    return [{ series_id: id, timestamp: r.timestamp, rr_ms: r.rr_ms, preceded_by_gap: r.preceded_by_gap, ...provenanceOf(r) }];
  });
  return { items, next: rows.next };
}

/** GET /v1/users/{id}/rr-intervals and /v1/users/{id}/hrv (spec "Reads"). */
export const heartbeatRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/rr-intervals',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Beats of heartbeat series with their RR intervals, in time order',
        description: 'One row per beat, ordered by the time of the beat; start and end bound the time of the beat.',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ ...SeriesIdQuery, ...WindowQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(RrInterval) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('rr-intervals', user.id, { series_id: q.series_id ?? null, start: q.start, end: q.end });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await rrIntervalPage(ctx.readStore, user.id, q.series_id, window, { after, limit: q.limit });
      return { data: page.items, next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );

  app.get(
    '/users/:id/hrv',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Heart rate variability per heartbeat series, oldest first',
        description: "One row per series, ordered by the series' first beat, then id; start and end bound the first beat.",
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ ...SeriesIdQuery, ...WindowQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(Hrv) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('hrv', user.id, { series_id: q.series_id ?? null, start: q.start, end: q.end });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listHrv(ctx.readStore, { userId: user.id, seriesId: q.series_id, window }, { after, limit: q.limit });
      return { data: page.items.map(toHrv), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
