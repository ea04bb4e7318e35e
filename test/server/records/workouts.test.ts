import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haversineM } from '../../../projections/records/track.js';
import { point, workout } from '../../projections/records/fixtures.js';
import { expectProblem, type TenantHandle, type TestApp, type UserBody } from '../../support/server.js';
import { allPages, APPLE_WATCH, expectListRefusals, getPage, ingest, recordsWorld, served } from './recordsHelper.js';

type Workout = { id: number; external_id: string; type: string; is_primary_source: boolean; track: Record<string, unknown> | null } & Record<string, unknown>;
type Point = { workout_id: number; timestamp: string; latitude: number; longitude: number } & Record<string, unknown>;

let t: TestApp, tenant: TenantHandle, other: TenantHandle, user: UserBody, sibling: UserBody, stranger: UserBody;

const GARMIN = { provider: 'device-b', source: 'garmin', device: 'Forerunner 965', body_worn: true };
const ROUTE = [point('2026-11-01T07:20:00Z', 52.52, 13.42, 40), point('2026-11-01T07:00:00Z', 52.52, 13.4, 34), point('2026-11-01T07:10:00Z', 52.52, 13.41, 36.5)];

const RUN_1 = workout({ external_id: 'run-1', route: ROUTE });

beforeAll(async () => {
  ({ t, tenant, other, user, sibling, stranger } = await recordsWorld('workouts'));
  await ingest(t, tenant.id, user.id, 'workout', [
    RUN_1,
    workout({ external_id: 'walk-1', type: 'walking', start_date: '2026-11-01T18:00:00.000Z', end_date: '2026-11-01T18:30:00.000Z', duration_s: 1800 }),
    workout({ external_id: 'other-2', type: 'other', start_date: '2026-11-02T07:00:00.000Z', end_date: '2026-11-02T07:45:00.000Z', duration_s: 2700 }),
    workout({ external_id: 'swim-3', type: 'swimming', start_date: '2026-11-03T10:00:00.000Z', end_date: '2026-11-03T11:00:00.000Z' }),
  ]);
  await ingest(t, tenant.id, user.id, 'workout', [
    // The same run seen by the watch's maker: garmin ranks before apple for workouts.
    workout({ ...GARMIN, external_id: 'g-run-1', start_date: '2026-11-01T07:02:00.000Z', end_date: '2026-11-01T08:01:00.000Z' }),
    // The same session labelled differently by each source.
    workout({ ...GARMIN, external_id: 'g-run-2', start_date: '2026-11-02T07:00:00.000Z', end_date: '2026-11-02T07:40:00.000Z', duration_s: 2400 }),
  ]);
  await ingest(t, other.id, stranger.id, 'workout', [workout({ external_id: 'stranger-run', route: ROUTE })]);
});
afterAll(async () => {
  await t?.close();
});

const url = (u = user.id) => `/v1/users/${u}/workouts`;
const list = async (query: Record<string, string> = {}, key = tenant.apiKey, u = user.id) => (await allPages<Workout>(t, key, url(u), query)).flatMap((p) => p.data);
const ids = (ws: Workout[]) => ws.map((w) => w.external_id);
const idOf = async (externalId: string) => (await list({ view: 'all' })).find((w) => w.external_id === externalId)!.id;

describe('GET /v1/users/{id}/workouts (Reads: workouts — type, start, end, view; order start_date)', () => {
  it('answers workouts with their track summary computed from the route (Resources: workouts with routes and track summaries)', async () => {
    const run = (await list({ view: 'all' })).find((w) => w.external_id === 'run-1')!;
    const legs = haversineM({ latitude: 52.52, longitude: 13.4 }, { latitude: 52.52, longitude: 13.41 }) + haversineM({ latitude: 52.52, longitude: 13.41 }, { latitude: 52.52, longitude: 13.42 });
    expect(run).toEqual(
      served(
        RUN_1,
        {
          track: {
            points: 3,
            distance_m: expect.closeTo(legs, 6),
            elevation_gain_m: 6,
            min_altitude_m: 34,
            max_altitude_m: 40,
            bbox: { min_latitude: 52.52, min_longitude: 13.4, max_latitude: 52.52, max_longitude: 13.42 },
          },
          is_primary_source: false,
        },
        ['route'],
      ),
    );
    expect((await list({ view: 'all' })).find((w) => w.external_id === 'walk-1')!.track).toBeNull();
  });

  it('merged (default) hides a workout when a better ranked source has one sharing at least half of the shorter, whatever its activity (Merged view: sessions; built-in workouts order garmin before apple)', async () => {
    expect(ids(await list())).toEqual(['g-run-1', 'walk-1', 'g-run-2', 'swim-3']);
  });

  it('view=all lists every source, ordered by start_date then id (Merged view: all; Reads: order start_date)', async () => {
    const all = await list({ view: 'all' });
    expect(all.map((w) => [w.external_id, w.is_primary_source])).toEqual([
      ['run-1', false],
      ['g-run-1', true],
      ['walk-1', true],
      ['other-2', false],
      ['g-run-2', true],
      ['swim-3', true],
    ]);
  });

  it('type filters by activity; the merged view still compares across activities (Reads: workouts type)', async () => {
    expect(ids(await list({ type: 'running' }))).toEqual(['g-run-1', 'g-run-2']);
    expect(ids(await list({ type: 'running', view: 'all' }))).toEqual(['run-1', 'g-run-1', 'g-run-2']);
    expect(ids(await list({ type: 'other' }))).toEqual([]);
    expect(ids(await list({ type: 'other', view: 'all' }))).toEqual(['other-2']);
    expect(ids(await list({ type: 'yoga' }))).toEqual([]);
  });

  it('start (inclusive) and end (exclusive) bound start_date (Conventions 2)', async () => {
    expect(ids(await list({ view: 'all', start: '2026-11-01T07:02:00Z', end: '2026-11-02T07:00:00Z' }))).toEqual(['g-run-1', 'walk-1']);
    expect(ids(await list({ start: '2026-11-02' }))).toEqual(['g-run-2', 'swim-3']);
  });

  it('pages across pages until next_cursor is null (Conventions 1)', async () => {
    const pages = await allPages<Workout>(t, tenant.apiKey, url(), { limit: '3' });
    expect(pages.map((p) => ids(p.data))).toEqual([['g-run-1', 'walk-1', 'g-run-2'], ['swim-3']]);
    const all = await allPages<Workout>(t, tenant.apiKey, url(), { view: 'all', limit: '1' });
    expect(all.flatMap((p) => ids(p.data))).toEqual(['run-1', 'g-run-1', 'walk-1', 'other-2', 'g-run-2', 'swim-3']);
  });

  it('refuses a bad window, limit or cursor with 400; a cursor of another type filter is 400 (Errors 2)', async () => {
    await expectListRefusals(t, tenant.apiKey, url());
    const first = await getPage(t, tenant.apiKey, url(), { type: 'running', limit: '1' });
    expectProblem(await t.call('GET', url(), { key: tenant.apiKey, query: { type: 'walking', cursor: first.next_cursor! } }), 400);
  });

  it("another tenant's user and an unknown user are 404 (Reads rule 6)", async () => {
    expectProblem(await t.call('GET', url(), { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', url('00000000-0000-4000-8000-000000000000'), { key: tenant.apiKey }), 404);
  });
});

describe('GET /v1/users/{id}/workouts/{workout_id}/route (Reads: start, end; order timestamp)', () => {
  const routeUrl = (workoutId: number | string, u = user.id) => `/v1/users/${u}/workouts/${workoutId}/route`;

  it('answers the GPS points in time order, each naming the workout (Resources: workouts with routes)', async () => {
    const id = await idOf('run-1');
    const { data, next_cursor } = await getPage<Point>(t, tenant.apiKey, routeUrl(id));
    expect(next_cursor).toBeNull();
    expect(data.map((p) => [p.timestamp, p.longitude])).toEqual([
      ['2026-11-01T07:00:00.000Z', 13.4],
      ['2026-11-01T07:10:00.000Z', 13.41],
      ['2026-11-01T07:20:00.000Z', 13.42],
    ]);
    expect(data[0]).toEqual({
      workout_id: id,
      timestamp: '2026-11-01T07:00:00.000Z',
      latitude: 52.52,
      longitude: 13.4,
      altitude_m: 34,
      speed_mps: 3.2,
      course_deg: 90,
      horizontal_accuracy_m: 5,
      ...APPLE_WATCH,
    });
  });

  it('start and end bound the timestamp; pages continue across pages; a workout without a route has no points (Conventions 1, 2)', async () => {
    const id = await idOf('run-1');
    expect((await getPage<Point>(t, tenant.apiKey, routeUrl(id), { start: '2026-11-01T07:10:00Z', end: '2026-11-01T07:20:00Z' })).data.map((p) => p.timestamp)).toEqual(['2026-11-01T07:10:00.000Z']);
    const pages = await allPages<Point>(t, tenant.apiKey, routeUrl(id), { limit: '2' });
    expect(pages.map((p) => p.data.length)).toEqual([2, 1]);
    expect((await getPage(t, tenant.apiKey, routeUrl(await idOf('walk-1')))).data).toEqual([]);
    await expectListRefusals(t, tenant.apiKey, routeUrl(id));
  });

  it("an unknown workout, another user's or another tenant's, or a non-integer workout_id is 404 (Conventions 6; Errors 2: 404 workout)", async () => {
    const id = await idOf('run-1');
    expectProblem(await t.call('GET', routeUrl(id + 555), { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', routeUrl(id, sibling.id), { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', routeUrl(id), { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', routeUrl(id, stranger.id), { key: other.apiKey }), 404);
    const strangers = await list({}, other.apiKey, stranger.id);
    expectProblem(await t.call('GET', routeUrl(strangers[0]!.id), { key: tenant.apiKey }), 404);
    for (const bad of ['run-1', '2e3', '12345678901234567890']) expectProblem(await t.call('GET', routeUrl(bad), { key: tenant.apiKey }), 404);
  });

  it('a re-sent workout keeps its id and its route is replaced (external_id updates, never duplicates)', async () => {
    const id = await idOf('run-1');
    await ingest(t, tenant.id, user.id, 'workout', [workout({ external_id: 'run-1', route: [point('2026-11-01T07:30:00Z', 52.5, 13.5, 50)] })]);
    const again = (await list({ view: 'all' })).filter((w) => w.external_id === 'run-1');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ id, track: { points: 1, distance_m: 0, elevation_gain_m: 0 } });
    expect((await getPage<Point>(t, tenant.apiKey, routeUrl(id))).data.map((p) => p.timestamp)).toEqual(['2026-11-01T07:30:00.000Z']);
  });
});
