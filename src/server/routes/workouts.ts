import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RoutePointDoc, WorkoutDoc } from '../../../projections/records/workoutsProjection.js';
import { getWorkout, listRoutePoints, listWorkouts } from '../../../queries/records/listWorkouts.js';
import { problems } from '../problems.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { integerIdParam, IsPrimarySource, Metadata, Provenance, provenanceOf, RecordId, RecordProvenance, recordProvenanceOf } from './recordSchemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, ViewQuery, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const TrackSummary = z
  .object({
    points: z.number().int().describe('Number of route points'),
    distance_m: z.number().describe('Sum of great-circle (haversine) distances between successive points, metres'),
    elevation_gain_m: z.number().nullable().describe('Sum of rises between successive points with an altitude, metres; null without altitudes'),
    min_altitude_m: z.number().nullable(),
    max_altitude_m: z.number().nullable(),
    bbox: z
      .object({ min_latitude: z.number(), min_longitude: z.number(), max_latitude: z.number(), max_longitude: z.number() })
      .describe('Bounding box of the route, degrees'),
  })
  .describe('Track summary computed from the route');

export const Workout = z
  .object({
    id: RecordId,
    type: z.string().describe('Canonical activity, e.g. running, cycling, walking, swimming, strength_training, other'),
    start_date: DateTime,
    end_date: DateTime,
    duration_s: z.number().describe('Duration, seconds'),
    active_energy_kcal: z.number().nullable(),
    distance_m: z.number().nullable().describe('Distance as the provider reported it, metres'),
    avg_heart_rate: z.number().nullable().describe('count/min'),
    max_heart_rate: z.number().nullable().describe('count/min'),
    steps: z.number().nullable(),
    external_id: z.string().describe("The provider's own identifier"),
    track: TrackSummary.nullable().describe('Summary of the GPS route; null for a workout without one'),
    is_primary_source: IsPrimarySource,
    metadata: Metadata,
    ...RecordProvenance,
  })
  .describe('Workout');

export const RoutePoint = z
  .object({
    workout_id: z.number().int().describe('Id of the workout'),
    timestamp: DateTime,
    latitude: z.number().describe('Degrees, WGS 84'),
    longitude: z.number().describe('Degrees, WGS 84'),
    altitude_m: z.number().nullable(),
    speed_mps: z.number().nullable().describe('Metres per second'),
    course_deg: z.number().nullable().describe('Heading, degrees from true north'),
    horizontal_accuracy_m: z.number().nullable(),
    ...Provenance,
  })
  .describe('Workout route point');

export const toWorkout = (d: WorkoutDoc & { primary: boolean }) => ({
  id: d.id,
  type: d.type,
  start_date: d.start_date,
  end_date: d.end_date,
  duration_s: d.duration_s,
  active_energy_kcal: d.active_energy_kcal,
  distance_m: d.distance_m,
  avg_heart_rate: d.avg_heart_rate,
  max_heart_rate: d.max_heart_rate,
  steps: d.steps,
  external_id: d.external_id,
  track: d.track,
  is_primary_source: d.primary,
  metadata: d.metadata,
  ...recordProvenanceOf(d),
});

export const toRoutePoint = (workoutId: number) => (d: RoutePointDoc) => ({
  workout_id: workoutId,
  timestamp: d.timestamp,
  latitude: d.latitude,
  longitude: d.longitude,
  altitude_m: d.altitude_m,
  speed_mps: d.speed_mps,
  course_deg: d.course_deg,
  horizontal_accuracy_m: d.horizontal_accuracy_m,
  ...provenanceOf(d),
});

const WorkoutParams = UserParams.extend({ workout_id: z.string().describe('Workout id (integer int64)') });

/** GET /v1/users/{id}/workouts and …/workouts/{workout_id}/route (spec "Reads"). */
export const workoutsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/workouts',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Workouts, oldest first',
        description:
          'Ordered by start_date, then id; start and end bound start_date. In the merged view a workout is listed only when no better ranked source has a workout (of any activity) sharing at least half of the shorter one.',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({
          type: z.string().min(1).optional().describe('Activity (e.g. running); all activities when absent'),
          ...WindowQuery,
          ...ViewQuery,
          ...PagingQuery,
        }),
        response: withProblems({ 200: pageOf(Workout) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('workouts', user.id, { type: q.type ?? null, start: q.start, end: q.end, view: q.view });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listWorkouts(ctx.readStore, { userId: user.id, type: q.type, window, view: q.view }, { after, limit: q.limit });
      return { data: page.items.map(toWorkout), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );

  app.get(
    '/users/:id/workouts/:workout_id/route',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: "GPS points of one workout's route, in time order",
        description: "Ordered by timestamp; start and end bound the timestamp. An unknown workout, another user's or another tenant's, is a 404.",
        tags: ['records'],
        params: WorkoutParams,
        querystring: z.object({ ...WindowQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(RoutePoint) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const workoutId = integerIdParam(request.params.workout_id);
      const workout = workoutId === null ? null : await getWorkout(ctx.readStore, user.id, workoutId);
      if (!workout) throw problems.notFound('workout not found');
      const window = windowOf(q);
      const scope = cursorScope('workout-route', user.id, { workout_id: workout.id, start: q.start, end: q.end });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listRoutePoints(ctx.readStore, { userId: user.id, workoutKey: workout._id, window }, { after, limit: q.limit });
      return { data: page.items.map(toRoutePoint(workout.id)), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
