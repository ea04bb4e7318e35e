import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordId, recordKey } from '../../../projections/records/recordIds.js';
import { EARTH_RADIUS_M, haversineM, trackSummary } from '../../../projections/records/track.js';
import { workoutsProjection, type RoutePointDoc, type WorkoutDoc } from '../../../projections/records/workoutsProjection.js';
import { point, workout } from './fixtures.js';
import { ingested, projectionHarness, PROVIDER, TENANT, USER } from './harness.js';

/** One degree of arc on the mean Earth sphere: R × π / 180 = 111 195.08 m. */
const ONE_DEGREE_M = (EARTH_RADIUS_M * Math.PI) / 180;

describe('track summary (Resources: workouts with routes and track summaries)', () => {
  it('haversine distance of one degree along the equator or a meridian is R·π/180 (111 195 m)', () => {
    expect(ONE_DEGREE_M).toBeCloseTo(111_195.08, 1);
    expect(haversineM({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 1 })).toBeCloseTo(ONE_DEGREE_M, 6);
    expect(haversineM({ latitude: 10, longitude: 5 }, { latitude: 11, longitude: 5 })).toBeCloseTo(ONE_DEGREE_M, 6);
    // One degree of longitude at 60° latitude: haversine gives 2R·asin(cos 60° · sin 0.5°) = 55 596.0 m.
    expect(haversineM({ latitude: 60, longitude: 0 }, { latitude: 60, longitude: 1 })).toBeCloseTo(2 * EARTH_RADIUS_M * Math.asin(0.5 * Math.sin((0.5 * Math.PI) / 180)), 6);
  });

  it('sums distances between successive points in time order, rises between points with an altitude, min/max altitude and bbox', () => {
    const t = trackSummary([
      point('2026-11-01T07:00:00Z', 0, 0, 10),
      point('2026-11-01T07:10:00Z', 0, 1, 15),
      // Given out of order: sorted by timestamp before summing.
      point('2026-11-01T07:30:00Z', 1, 1, 12),
      point('2026-11-01T07:20:00Z', 0.5, 1, null),
      point('2026-11-01T07:40:00Z', 1, 0, 20),
    ]);
    // Legs: (0,0)→(0,1) 1°, (0,1)→(0.5,1) 0.5°, (0.5,1)→(1,1) 0.5°, (1,1)→(1,0) ≈ cos(1°)·1°.
    const lastLeg = haversineM({ latitude: 1, longitude: 1 }, { latitude: 1, longitude: 0 });
    expect(t!.distance_m).toBeCloseTo(2 * ONE_DEGREE_M + lastLeg, 3);
    // Altitudes in order 10, 15, (none), 12, 20: rises 5 + 8 = 13.
    expect(t).toMatchObject({ points: 5, elevation_gain_m: 13, min_altitude_m: 10, max_altitude_m: 20, bbox: { min_latitude: 0, min_longitude: 0, max_latitude: 1, max_longitude: 1 } });
  });

  it('is null without route points; altitude figures are null when no point has one', () => {
    expect(trackSummary([])).toBeNull();
    expect(trackSummary([point('2026-11-01T07:00:00Z', 1, 2)])).toEqual({
      points: 1,
      distance_m: 0,
      elevation_gain_m: null,
      min_altitude_m: null,
      max_altitude_m: null,
      bbox: { min_latitude: 1, min_longitude: 2, max_latitude: 1, max_longitude: 2 },
    });
  });
});

describe('workouts projection (Resources: workouts with routes and track summaries)', () => {
  let h: Awaited<ReturnType<typeof projectionHarness>>;
  beforeAll(async () => {
    h = await projectionHarness(workoutsProjection);
  });
  afterAll(async () => {
    await h.close();
  });
  const KEY = recordKey(USER, PROVIDER, 'run-1');

  it('stores the workout with its track summary (not its route) and one row per route point', async () => {
    await h.apply(ingested('workout', 20, [workout({ route: [point('2026-11-01T07:00:00Z', 0, 0, 5), point('2026-11-01T07:30:00Z', 0, 1, 8)] })]));
    const [w] = await h.all<WorkoutDoc>('workouts');
    expect(w).toMatchObject({ _id: KEY, id: recordId(20, 0), user_id: USER, tenant_id: TENANT, day: '2026-11-01', type: 'running', track: { points: 2, elevation_gain_m: 3 } });
    expect(w!.track!.distance_m).toBeCloseTo(ONE_DEGREE_M, 6);
    expect(w).not.toHaveProperty('route');
    const pts = await h.all<RoutePointDoc>('workout_route_points');
    expect(pts.map((p) => [p.workout_key, p.timestamp, p.latitude, p.longitude, p.altitude_m])).toEqual([
      [KEY, '2026-11-01T07:00:00.000Z', 0, 0, 5],
      [KEY, '2026-11-01T07:30:00.000Z', 0, 1, 8],
    ]);
  });

  it('a re-sent workout keeps its id, recomputes the summary and replaces the route', async () => {
    await h.apply(ingested('workout', 30, [workout({ active_energy_kcal: 700, route: [point('2026-11-01T07:05:00Z', 2, 2, 1)] })]));
    const all = await h.all<WorkoutDoc>('workouts');
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: recordId(20, 0), active_energy_kcal: 700, track: { points: 1, distance_m: 0 } });
    const pts = await h.all<RoutePointDoc>('workout_route_points');
    expect(pts.map((p) => p.timestamp)).toEqual(['2026-11-01T07:05:00.000Z']);
  });

  it('a workout re-sent without a route loses its points and its track', async () => {
    await h.apply(ingested('workout', 31, [workout()]));
    expect((await h.all<WorkoutDoc>('workouts'))[0]!.track).toBeNull();
    expect(await h.store.count('workout_route_points')).toBe(0);
  });
});
