import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ARCHIVE_PAGE, userArchive } from '../../src/archive/userArchive.js';
import { fixtureA, fixtureB, fixtureC, postUpload, requestFor, waitForEtl } from '../ingest/uploadHelpers.js';
import { readAllPages } from '../support/pages.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp, type UserBody } from '../support/server.js';

type Row = Record<string, unknown>;

let t: TestApp;
let tenant: TenantHandle;
let user: UserBody;
let lines: Row[];

const readAll = (path: string, query: Record<string, string> = {}) => readAllPages(t, tenant.apiKey, `/v1/users/${user.id}${path}`, { view: 'all', ...query });

const strip = (rows: Row[]) => rows.map(({ kind: _kind, ...rest }) => rest);
const ofKind = (kind: string) => lines.filter((l) => l.kind === kind);

async function archive(token: string) {
  return t.app.inject({ method: 'GET', url: '/v1/me/archive', headers: { authorization: `Bearer ${token}` } });
}

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('archive');
  user = await t.createUser(tenant.apiKey);
  const upload = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  for (const [slug, payload] of [
    ['device-a', fixtureA()],
    ['device-b', fixtureB()],
    ['device-c', fixtureC()],
  ] as const)
    expectStatus(await postUpload(t, slug, upload.token, `archive-${slug}`, requestFor(slug, payload)), 202);
  await waitForEtl(t, tenant.apiKey, user.id);
  expectStatus(await t.call('POST', `/v1/users/${user.id}/tags`, { key: tenant.apiKey, body: { kind: 'travel', start: '2026-01-01T00:00:00Z' } }), 201);
  const read = await t.mintToken(tenant.apiKey, user.id, { scopes: ['read'] });
  const res = await archive(read.token);
  expectStatus(res, 200);
  expect(res.headers['content-type']).toBe('application/x-ndjson');
  expect(res.headers['content-encoding']).toBe('gzip');
  lines = gunzipSync(res.rawPayload).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe("the user's own archive (Authentication 3, contracts §11: GET /v1/me/archive)", () => {
  it('holds every record of the user as the reads answer them (view all), each line with its kind', async () => {
    const sampleTypes = [...new Set(ofKind('quantity_sample').map((l) => l.type as string))];
    expect(sampleTypes.length).toBeGreaterThan(1);
    const samples: Row[] = [];
    for (const type of sampleTypes.sort()) samples.push(...(await readAll('/samples', { type })));
    expect(strip(ofKind('quantity_sample'))).toEqual(samples);
    expect(strip(ofKind('category_sample'))).toEqual(await readAll('/category-samples'));
    expect(strip(ofKind('sleep_session'))).toEqual(await readAll('/sleep'));
    expect(strip(ofKind('workout'))).toEqual(await readAll('/workouts'));
    expect(strip(ofKind('nutrition'))).toEqual(await readAll('/nutrition'));
    expect(strip(ofKind('daily_summary'))).toEqual(await readAll('/daily'));
    expect(strip(ofKind('hrv'))).toEqual(await readAll('/hrv'));
    expect(strip(ofKind('rr_interval')).length).toEqual((await readAll('/rr-intervals')).length);
    expect(strip(ofKind('menstrual_cycle'))).toEqual(await readAll('/menstrual-cycles'));
    expect(ofKind('ecg').map(({ kind: _k, voltages: _v, ...rest }) => rest)).toEqual(await readAll('/ecg'));
    for (const ecg of ofKind('ecg')) expect((ecg.voltages as number[]).length).toBe(ecg.number_of_measurements);
    const phases: Row[] = [];
    for (const s of ofKind('sleep_session')) phases.push(...(await readAll(`/sleep/${s.id}/phases`)));
    expect(strip(ofKind('sleep_phase'))).toEqual(phases);
    const points: Row[] = [];
    for (const w of ofKind('workout')) points.push(...(await readAll(`/workouts/${w.id}/route`)));
    expect(strip(ofKind('workout_route_point'))).toEqual(points);
    expect(ofKind('time_tag')).toEqual([expect.objectContaining({ kind: 'time_tag', tag_kind: 'travel', start: '2026-01-01T00:00:00.000Z', end: null })]);
  });

  it('the fixtures give the archive something of most kinds (the test above compares something)', () => {
    const kinds = new Set(lines.map((l) => l.kind));
    for (const k of ['quantity_sample', 'category_sample', 'sleep_session', 'sleep_phase', 'workout', 'hrv', 'rr_interval', 'time_tag']) expect(kinds).toContain(k);
  });

  it('comes kind by kind (each kind one run of lines), oldest first within a kind', () => {
    const runs = lines.map((l) => l.kind).filter((k, i, all) => i === 0 || all[i - 1] !== k);
    expect(new Set(runs).size).toBe(runs.length);
    const sleep = ofKind('sleep_session').map((l) => l.bedtime_start as string);
    expect(sleep).toEqual([...sleep].sort());
    const workouts = ofKind('workout').map((l) => l.start_date as string);
    expect(workouts).toEqual([...workouts].sort());
  });

  it("holds no other user's records", async () => {
    const other = await t.createUser(tenant.apiKey);
    const token = await t.mintToken(tenant.apiKey, other.id, { scopes: ['read'] });
    const res = await archive(token.token);
    expectStatus(res, 200);
    expect(gunzipSync(res.rawPayload).toString('utf8')).toBe('');
  });

  it('reads the read models a page at a time, only as the consumer pulls (constant memory)', async () => {
    const find = vi.spyOn(t.ctx.readStore, 'find');
    try {
      const it = userArchive(t.ctx.readStore, user.id);
      await it.next();
      // The first sample type, then its first page: nothing beyond what the first line needs.
      expect(find.mock.calls.length).toBeLessThanOrEqual(2);
      for (const [, q] of find.mock.calls) expect(q?.limit ?? 0).toBeLessThanOrEqual(ARCHIVE_PAGE + 1);
      await it.return(undefined);
    } finally {
      find.mockRestore();
    }
  });

  it('refuses a tenant key and a token without read with 403; no credential with 401 (Authentication 3, 5)', async () => {
    expectProblem(await t.call('GET', '/v1/me/archive', { key: tenant.apiKey }), 403);
    const upload = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
    expectProblem(await archive(upload.token), 403);
    expectProblem(await t.call('GET', '/v1/me/archive'), 401);
    expectProblem(await archive('svc_ut_' + 'x'.repeat(43)), 401);
  });
});
