import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phase, sleepSession } from '../../projections/records/fixtures.js';
import { expectProblem, type TenantHandle, type TestApp, type UserBody } from '../../support/server.js';
import { allPages, APPLE_WATCH, expectListRefusals, getPage, ingest, recordsWorld, served } from './recordsHelper.js';

type Session = { id: number; external_id: string; bedtime_start: string; source: string; provider: string; is_primary_source: boolean } & Record<string, unknown>;
type Phase = { id: number; session_id: number; phase: string; start_date: string; end_date: string; duration_s: number } & Record<string, unknown>;

let t: TestApp, tenant: TenantHandle, other: TenantHandle, user: UserBody, sibling: UserBody, stranger: UserBody;

const OURA = { provider: 'device-b', source: 'oura', device: 'Oura Ring', body_worn: true };
const NIGHT_1 = sleepSession({ external_id: 'night-1' });

beforeAll(async () => {
  ({ t, tenant, other, user, sibling, stranger } = await recordsWorld('sleep'));
  await ingest(t, tenant.id, user.id, 'sleep_session', [
    NIGHT_1,
    sleepSession({ external_id: 'night-2', bedtime_start: '2026-11-02T22:30:00.000Z', bedtime_end: '2026-11-03T06:30:00.000Z', phases: [] }),
    sleepSession({ external_id: 'night-3', bedtime_start: '2026-11-03T23:00:00.000Z', bedtime_end: '2026-11-04T07:00:00.000Z', phases: [] }),
  ]);
  await ingest(t, tenant.id, user.id, 'sleep_session', [
    // Shares 7.5 h of apple's 8 h night-2: the same night, and oura ranks before apple for sleep.
    sleepSession({ ...OURA, external_id: 'oura-2', bedtime_start: '2026-11-02T23:00:00.000Z', bedtime_end: '2026-11-03T07:00:00.000Z', phases: [phase('deep', '2026-11-02T23:00:00Z', '2026-11-03T01:00:00Z')] }),
    // A nap matching nothing.
    sleepSession({ ...OURA, external_id: 'nap-3', bedtime_start: '2026-11-03T14:00:00.000Z', bedtime_end: '2026-11-03T14:30:00.000Z', phases: [] }),
    // Shares 1 h with apple's night-3, less than half of its own 4 h: not the same session.
    sleepSession({ ...OURA, external_id: 'oura-4', bedtime_start: '2026-11-04T06:00:00.000Z', bedtime_end: '2026-11-04T10:00:00.000Z', phases: [] }),
  ]);
  // Another tenant's user has a session too.
  await ingest(t, other.id, stranger.id, 'sleep_session', [sleepSession({ external_id: 'stranger-night' })]);
});
afterAll(async () => {
  await t?.close();
});

const url = (u = user.id) => `/v1/users/${u}/sleep`;
const sessions = async (query: Record<string, string> = {}) => (await allPages<Session>(t, tenant.apiKey, url(), query)).flatMap((p) => p.data);
const idOf = async (externalId: string) => (await sessions({ view: 'all' })).find((s) => s.external_id === externalId)!.id;

describe('GET /v1/users/{id}/sleep (Reads: sleep — start, end, view; order bedtime_start)', () => {
  it('answers Sleep sessions with the spec fields plus provenance (Resources: Sleep session)', async () => {
    const [s] = (await getPage<Session>(t, tenant.apiKey, url(), { limit: '1' })).data;
    expect(s).toEqual(served(NIGHT_1, { is_primary_source: true }, ['phases']));
  });

  it('merged (default) lists a session only when no better ranked source has one sharing at least half of the shorter (Merged view: sessions; built-in sleep order oura before apple)', async () => {
    expect((await sessions()).map((s) => s.external_id)).toEqual(['night-1', 'oura-2', 'nap-3', 'night-3', 'oura-4']);
    expect((await sessions({ view: 'merged' })).map((s) => s.external_id)).toEqual(['night-1', 'oura-2', 'nap-3', 'night-3', 'oura-4']);
  });

  it('view=all lists every stored session of every source, oldest first, flagging the merged ones (Merged view: all)', async () => {
    const all = await sessions({ view: 'all' });
    expect(all.map((s) => [s.external_id, s.is_primary_source])).toEqual([
      ['night-1', true],
      ['night-2', false],
      ['oura-2', true],
      ['nap-3', true],
      ['night-3', true],
      ['oura-4', true],
    ]);
  });

  it('start (inclusive) and end (exclusive) bound bedtime_start (Conventions 2; Reads: sleep)', async () => {
    const got = await sessions({ view: 'all', start: '2026-11-02T23:00:00Z', end: '2026-11-03T23:00:00Z' });
    expect(got.map((s) => s.external_id)).toEqual(['oura-2', 'nap-3']);
    expect((await sessions({ start: '2026-11-03', end: '2026-11-04' })).map((s) => s.external_id)).toEqual(['nap-3', 'night-3']);
  });

  it('pages with cursor and limit until next_cursor is null, in both views (Conventions 1)', async () => {
    const merged = await allPages<Session>(t, tenant.apiKey, url(), { limit: '2' });
    expect(merged.map((p) => p.data.length)).toEqual([2, 2, 1]);
    expect(merged.flatMap((p) => p.data.map((s) => s.external_id))).toEqual(['night-1', 'oura-2', 'nap-3', 'night-3', 'oura-4']);
    const all = await allPages<Session>(t, tenant.apiKey, url(), { view: 'all', limit: '4' });
    expect(all.map((p) => p.data.length)).toEqual([4, 2]);
  });

  it('a cursor is bound to its list: reused with another view is a 400 (Errors 2: invalid cursor)', async () => {
    const first = await getPage(t, tenant.apiKey, url(), { view: 'all', limit: '1' });
    expectProblem(await t.call('GET', url(), { key: tenant.apiKey, query: { view: 'merged', cursor: first.next_cursor! } }), 400);
  });

  it('refuses a bad window, limit or cursor with 400 (Conventions 1, 2; Errors 2)', async () => {
    await expectListRefusals(t, tenant.apiKey, url());
    expectProblem(await t.call('GET', url(), { key: tenant.apiKey, query: { view: 'best' } }), 400);
  });

  it("another tenant's user, an unknown user and a deleting user are 404 (Reads rule 6; Conventions 6)", async () => {
    expectProblem(await t.call('GET', url(), { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', url('00000000-0000-4000-8000-000000000000'), { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', url('not-a-uuid'), { key: tenant.apiKey }), 404);
    const doomed = await t.createUser(tenant.apiKey);
    await ingest(t, tenant.id, doomed.id, 'sleep_session', [sleepSession({ external_id: 'doomed' })]);
    await t.deleteUser(tenant.apiKey, doomed.id);
    expectProblem(await t.call('GET', url(doomed.id), { key: tenant.apiKey }), 404);
  });

  it('needs the tenant key: a user token is 403, no credential 401 (Authentication 5)', async () => {
    const token = await t.mintToken(tenant.apiKey, user.id);
    expectProblem(await t.call('GET', url(), { key: token.token }), 403);
    expectProblem(await t.call('GET', url()), 401);
  });
});

describe('GET /v1/users/{id}/sleep/{session_id}/phases (Reads: start, end; order start_date; Resources: Sleep phase)', () => {
  const phasesUrl = (sessionId: number | string, u = user.id) => `/v1/users/${u}/sleep/${sessionId}/phases`;

  it("answers the session's phases oldest first, each naming the session's id (Resources: Sleep phase)", async () => {
    const id = await idOf('night-1');
    const { data, next_cursor } = await getPage<Phase>(t, tenant.apiKey, phasesUrl(id));
    expect(next_cursor).toBeNull();
    expect(data.map((p) => [p.phase, p.duration_s, p.session_id])).toEqual([
      ['light', 3600, id],
      ['deep', 5400, id],
      ['rem', 19_800, id],
    ]);
    expect(data[0]).toEqual({
      id: expect.any(Number),
      session_id: id,
      phase: 'light',
      start_date: '2026-11-01T22:00:00.000Z',
      end_date: '2026-11-01T23:00:00.000Z',
      duration_s: 3600,
      ...APPLE_WATCH,
    });
  });

  it('start and end bound start_date; paging continues across pages (Conventions 1, 2)', async () => {
    const id = await idOf('night-1');
    const windowed = await getPage<Phase>(t, tenant.apiKey, phasesUrl(id), { start: '2026-11-01T23:00:00Z', end: '2026-11-02T00:30:00Z' });
    expect(windowed.data.map((p) => p.phase)).toEqual(['deep']);
    const pages = await allPages<Phase>(t, tenant.apiKey, phasesUrl(id), { limit: '2' });
    expect(pages.map((p) => p.data.map((x) => x.phase))).toEqual([['light', 'deep'], ['rem']]);
    await expectListRefusals(t, tenant.apiKey, phasesUrl(id));
  });

  it("an unknown session, another user's, another tenant's, or a non-integer session_id is 404 (Conventions 6; Errors 2: 404 session)", async () => {
    const id = await idOf('night-1');
    expectProblem(await t.call('GET', phasesUrl(id + 987_654), { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', phasesUrl(id, sibling.id), { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', phasesUrl(id), { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', phasesUrl(id, stranger.id), { key: other.apiKey }), 404);
    const strangerSession = (await getPage<Session>(t, other.apiKey, url(stranger.id))).data[0]!;
    expectProblem(await t.call('GET', phasesUrl(strangerSession.id), { key: tenant.apiKey }), 404);
    for (const bad of ['abc', '1.5', '-1', '99999999999999999999']) expectProblem(await t.call('GET', phasesUrl(bad), { key: tenant.apiKey }), 404);
  });

  it('a re-sent session keeps its id and its phases are replaced (Resources: sleep sessions with phases; external_id updates)', async () => {
    const id = await idOf('night-1');
    await ingest(t, tenant.id, user.id, 'sleep_session', [
      sleepSession({ external_id: 'night-1', sleep_score: 91, phases: [phase('awake', '2026-11-01T22:00:00Z', '2026-11-01T22:20:00Z'), phase('asleep', '2026-11-01T22:20:00Z', '2026-11-02T06:00:00Z')] }),
    ]);
    const again = (await sessions({ view: 'all' })).filter((s) => s.external_id === 'night-1');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ id, sleep_score: 91 });
    const { data } = await getPage<Phase>(t, tenant.apiKey, phasesUrl(id));
    expect(data.map((p) => [p.phase, p.session_id])).toEqual([
      ['awake', id],
      ['asleep', id],
    ]);
  });
});
