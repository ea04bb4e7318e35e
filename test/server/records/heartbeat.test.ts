import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heartbeats } from '../../projections/records/fixtures.js';
import { expectProblem, startTestApp, type TenantHandle, type TestApp, type UserBody } from '../../support/server.js';
import { allPages, APPLE_WATCH, expectListRefusals, getPage, ingest } from './recordsHelper.js';

type Rr = { series_id: number; timestamp: string; rr_ms: number | null; preceded_by_gap: boolean } & Record<string, unknown>;
type Hrv = { series_id: number; start_date: string; end_date: string; beats: number; rmssd_ms: number | null; sdnn_ms: number | null } & Record<string, unknown>;

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let user: UserBody;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('hrv-a');
  other = await t.createTenant('hrv-b');
  user = await t.createUser(tenant.apiKey);
  await ingest(t, tenant.id, user.id, 'heartbeat_series', [
    // Beats at 0, 0.8, 1.6, 2.5, 3.3 (after a gap), 4.1 s past 03:00:00.
    heartbeats({ external_id: 'hb-1' }),
    heartbeats({
      external_id: 'hb-2',
      start_date: '2026-11-01T03:00:02.000Z',
      end_date: '2026-11-01T03:00:05.000Z',
      beats: [
        { offset_s: 0, preceded_by_gap: false },
        { offset_s: 1, preceded_by_gap: false },
        { offset_s: 2, preceded_by_gap: false },
      ],
    }),
    // Starts at 03:00:00 but its first beat is at 03:00:05.
    heartbeats({
      external_id: 'hb-3',
      start_date: '2026-11-02T03:00:00.000Z',
      end_date: '2026-11-02T03:01:00.000Z',
      beats: [
        { offset_s: 5, preceded_by_gap: false },
        { offset_s: 5.9, preceded_by_gap: false },
      ],
    }),
  ]);
});
afterAll(async () => {
  await t?.close();
});

const rrUrl = (u = user.id) => `/v1/users/${u}/rr-intervals`;
const hrvUrl = (u = user.id) => `/v1/users/${u}/hrv`;
const hrvRows = async (query: Record<string, string> = {}) => (await allPages<Hrv>(t, tenant.apiKey, hrvUrl(), query)).flatMap((p) => p.data);
const rrRows = async (query: Record<string, string> = {}) => (await allPages<Rr>(t, tenant.apiKey, rrUrl(), query)).flatMap((p) => p.data);

describe('GET /v1/users/{id}/hrv (Reads: hrv — series_id, start, end on the series first beat; order first beat)', () => {
  it('answers one row per series with RMSSD and SDNN derived from the beats, matching hand-computed values', async () => {
    const rows = await hrvRows();
    expect(rows.map((r) => [r.start_date, r.beats])).toEqual([
      ['2026-11-01T03:00:00.000Z', 6],
      ['2026-11-01T03:00:02.000Z', 3],
      ['2026-11-02T03:00:05.000Z', 2],
    ]);
    // hb-1: RR 800, 800, 900, (gap), 800 → RMSSD sqrt((0² + 100²)/2) = 70.7107; SDNN sqrt(7500/4) = 43.3013.
    expect(rows[0]).toEqual({
      series_id: expect.any(Number),
      start_date: '2026-11-01T03:00:00.000Z',
      end_date: '2026-11-01T03:01:00.000Z',
      beats: 6,
      rmssd_ms: expect.closeTo(70.7107, 4),
      sdnn_ms: expect.closeTo(43.3013, 4),
      ...APPLE_WATCH,
      quality: [],
    });
    // hb-2: RR 1000, 1000 → RMSSD 0; SDNN needs 3 RR values → null. hb-3: one RR → both null.
    expect(rows[1]).toMatchObject({ rmssd_ms: 0, sdnn_ms: null });
    expect(rows[2]).toMatchObject({ rmssd_ms: null, sdnn_ms: null });
  });

  it("start and end bound the series' first beat, not its start_date (Reads: hrv)", async () => {
    expect((await hrvRows({ start: '2026-11-01T03:00:01Z', end: '2026-11-02T03:00:05Z' })).map((r) => r.start_date)).toEqual(['2026-11-01T03:00:02.000Z']);
    expect((await hrvRows({ start: '2026-11-02T03:00:05Z' })).map((r) => r.beats)).toEqual([2]);
  });

  it('series_id selects one series; an id the user has no series of lists nothing; a non-integer is 400', async () => {
    const [, second] = await hrvRows();
    expect((await hrvRows({ series_id: String(second!.series_id) })).map((r) => r.series_id)).toEqual([second!.series_id]);
    expect(await hrvRows({ series_id: String(second!.series_id + 77) })).toEqual([]);
    expectProblem(await t.call('GET', hrvUrl(), { key: tenant.apiKey, query: { series_id: 'abc' } }), 400);
  });

  it('pages until next_cursor is null; refuses a bad window, limit or cursor (Conventions 1, 2)', async () => {
    const pages = await allPages<Hrv>(t, tenant.apiKey, hrvUrl(), { limit: '2' });
    expect(pages.map((p) => p.data.length)).toEqual([2, 1]);
    await expectListRefusals(t, tenant.apiKey, hrvUrl());
  });

  it("another tenant's user and an unknown user are 404 (Reads rule 6)", async () => {
    expectProblem(await t.call('GET', hrvUrl(), { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', hrvUrl('00000000-0000-4000-8000-000000000000'), { key: tenant.apiKey }), 404);
  });
});

describe('GET /v1/users/{id}/rr-intervals (Reads: rr-intervals — series_id, start, end; order timestamp of the beat)', () => {
  it('lists every beat of every series in time order, with the RR interval ending at it (null for a first beat and after a gap)', async () => {
    const [s1, s2] = (await hrvRows()).map((r) => r.series_id);
    const rows = await rrRows({ end: '2026-11-02' });
    expect(rows.map((r) => [r.timestamp.slice(17), r.series_id, r.rr_ms, r.preceded_by_gap])).toEqual([
      ['00.000Z', s1, null, false],
      ['00.800Z', s1, 800, false],
      ['01.600Z', s1, 800, false],
      ['02.000Z', s2, null, false],
      ['02.500Z', s1, 900, false],
      ['03.000Z', s2, 1000, false],
      ['03.300Z', s1, null, true],
      ['04.000Z', s2, 1000, false],
      ['04.100Z', s1, 800, false],
    ]);
    expect(rows[1]).toEqual({
      series_id: s1,
      timestamp: '2026-11-01T03:00:00.800Z',
      rr_ms: 800,
      preceded_by_gap: false,
      ...APPLE_WATCH,
    });
  });

  it('series_id keeps one series; start and end bound the time of the beat (Reads: rr-intervals)', async () => {
    const [, s2] = (await hrvRows()).map((r) => r.series_id);
    expect((await rrRows({ series_id: String(s2) })).map((r) => r.rr_ms)).toEqual([null, 1000, 1000]);
    expect((await rrRows({ start: '2026-11-01T03:00:02Z', end: '2026-11-01T03:00:03.300Z' })).map((r) => r.timestamp.slice(17))).toEqual(['02.000Z', '02.500Z', '03.000Z']);
    expect(await rrRows({ series_id: String(s2! + 99_999) })).toEqual([]);
    expectProblem(await t.call('GET', rrUrl(), { key: tenant.apiKey, query: { series_id: '1.5' } }), 400);
  });

  it('pages across series until next_cursor is null; a cursor of another series_id is 400 (Conventions 1; Errors 2)', async () => {
    const pages = await allPages<Rr>(t, tenant.apiKey, rrUrl(), { limit: '4' });
    expect(pages.map((p) => p.data.length)).toEqual([4, 4, 3]);
    const [s1, s2] = (await hrvRows()).map((r) => r.series_id);
    const first = await getPage(t, tenant.apiKey, rrUrl(), { series_id: String(s1), limit: '1' });
    expectProblem(await t.call('GET', rrUrl(), { key: tenant.apiKey, query: { series_id: String(s2), cursor: first.next_cursor! } }), 400);
    await expectListRefusals(t, tenant.apiKey, rrUrl());
  });

  it("another tenant's user and an unknown user are 404 (Reads rule 6)", async () => {
    expectProblem(await t.call('GET', rrUrl(), { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', rrUrl('00000000-0000-4000-8000-000000000000'), { key: tenant.apiKey }), 404);
  });
});
