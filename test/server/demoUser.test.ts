import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoDays } from '../../src/processes/demo/fillDemoUser.js';
import { readAllPages } from '../support/pages.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

type Row = Record<string, unknown>;
type DemoAnswer = { user: { id: string; external_ref: string; status: string; created_at: string }; days: number; rows_written: number; persona: string };

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let mix: DemoAnswer;

const demo = (tenantId: string, body?: unknown, key = t.adminKey) => t.call('POST', `/v1/admin/tenants/${tenantId}/demo-user`, { key, body });

const readAll = (apiKey: string, userId: string, path: string, query: Record<string, string> = {}) => readAllPages(t, apiKey, `/v1/users/${userId}${path}`, query);

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('demo-a');
  other = await t.createTenant('demo-b');
  const res = await demo(tenant.id, { days: 3 });
  expectStatus(res, 200);
  mix = res.json() as DemoAnswer;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('demo personas (Instance admin routes: POST /v1/admin/tenants/{tenant_id}/demo-user)', () => {
  it('answers the Demo user answer: the user (external_ref demo-user for mix), days, rows_written, persona; Location at the admin user route', async () => {
    expect(mix).toEqual({
      user: { id: expect.any(String), external_ref: 'demo-user', status: 'active', created_at: expect.any(String) },
      days: 3,
      rows_written: expect.any(Number),
      persona: 'mix',
    });
    expect(mix.rows_written).toBeGreaterThan(500);
    const again = await demo(tenant.id, { days: 3 });
    expect(again.headers.location).toBe(`/v1/admin/tenants/${tenant.id}/users/${mix.user.id}`);
  });

  it('covers the given number of days ending yesterday (UTC)', async () => {
    const coverage = (await t.call('GET', `/v1/users/${mix.user.id}/coverage`, { key: tenant.apiKey, query: { view: 'all' } })).json() as { days: { date: string }[] };
    expect([...new Set(coverage.days.map((d) => d.date))].sort()).toEqual(demoDays(3, new Date()));
    expect(demoDays(3, new Date('2026-03-01T10:00:00Z'))).toEqual(['2026-02-26', '2026-02-27', '2026-02-28']);
  });

  it('repeating it adds nothing for days present (rows_written 0, the same records); more days add only the new ones', async () => {
    const before = await readAll(tenant.apiKey, mix.user.id, '/samples', { type: 'heart_rate', view: 'all' });
    const again = (await demo(tenant.id, { days: 3 })).json() as DemoAnswer;
    expect(again).toMatchObject({ user: { id: mix.user.id }, rows_written: 0 });
    expect(await readAll(tenant.apiKey, mix.user.id, '/samples', { type: 'heart_rate', view: 'all' })).toEqual(before);
    const more = (await demo(tenant.id, { days: 4 })).json() as DemoAnswer;
    expect(more.rows_written).toBeGreaterThan(0);
    expect(more.rows_written).toBeLessThan(mix.rows_written);
  });

  it('marks every synthetic record {synthetic: true}', async () => {
    const rows = [
      ...(await readAll(tenant.apiKey, mix.user.id, '/samples', { type: 'heart_rate', view: 'all' })),
      ...(await readAll(tenant.apiKey, mix.user.id, '/samples', { type: 'step_count', view: 'all' })),
      ...(await readAll(tenant.apiKey, mix.user.id, '/sleep', { view: 'all' })),
      ...(await readAll(tenant.apiKey, mix.user.id, '/category-samples', { view: 'all' })),
    ];
    expect(rows.length).toBeGreaterThan(100);
    for (const r of rows) expect(r.metadata).toMatchObject({ synthetic: true });
  });

  it('mix has two overlapping heart-rate and sleep sources, so the merged view leaves one out', async () => {
    const all = await readAll(tenant.apiKey, mix.user.id, '/samples', { type: 'heart_rate', view: 'all' });
    const merged = await readAll(tenant.apiKey, mix.user.id, '/samples', { type: 'heart_rate' });
    expect(new Set(all.map((r) => r.source))).toEqual(new Set(['apple', 'oura']));
    expect(merged.length).toBeLessThan(all.length);
    expect(new Set(merged.map((r) => r.source))).toEqual(new Set(['apple']));
    const sleepAll = await readAll(tenant.apiKey, mix.user.id, '/sleep', { view: 'all' });
    const sleepMerged = await readAll(tenant.apiKey, mix.user.id, '/sleep');
    expect(sleepMerged.length * 2).toBe(sleepAll.length);
    expect(new Set(sleepMerged.map((r) => r.source))).toEqual(new Set(['oura']));
  });

  it('merged heart-rate statistics of the demo user answer (the quick start line)', async () => {
    const [start, , end] = demoDays(3, new Date());
    const res = await t.call('GET', `/v1/users/${mix.user.id}/samples/stats`, { key: tenant.apiKey, query: { type: 'heart_rate', start: start!, end: end!, interval: 'day' } });
    expectStatus(res, 200);
    expect(JSON.stringify(res.json())).toMatch(/avg/);
  });

  it('runner, sleep and weight personas default to demo-<persona> and write their own kinds', async () => {
    const runner = (await demo(tenant.id, { persona: 'runner', days: 7 })).json() as DemoAnswer;
    expect(runner.user.external_ref).toBe('demo-runner');
    expect((await readAll(tenant.apiKey, runner.user.id, '/workouts')).length).toBeGreaterThanOrEqual(4);
    const weight = (await demo(tenant.id, { persona: 'weight', days: 5, external_ref: 'scale-person' })).json() as DemoAnswer;
    expect(weight.user.external_ref).toBe('scale-person');
    expect((await readAll(tenant.apiKey, weight.user.id, '/samples', { type: 'body_mass' })).length).toBe(5);
    const sleep = (await demo(tenant.id, { persona: 'sleep', days: 2 })).json() as DemoAnswer;
    expect(sleep.user.external_ref).toBe('demo-sleep');
    expect((await readAll(tenant.apiKey, sleep.user.id, '/sleep')).length).toBe(2);
  });

  it('is recorded as data.write in the admin log and, with actor admin, in the tenant log', async () => {
    const admin = (await t.call('GET', '/v1/admin/audit-log', { key: t.adminKey, query: { limit: '1000' } })).json() as { data: Row[] };
    expect(admin.data.some((e) => e.action === 'data.write')).toBe(true);
    const own = (await t.call('GET', '/v1/audit-log', { key: tenant.apiKey, query: { limit: '1000' } })).json() as { data: Row[] };
    expect(own.data.some((e) => e.action === 'data.write' && e.actor === 'admin')).toBe(true);
  });

  it.each([
    ['days 0', { days: 0 }],
    ['days 91', { days: 91 }],
    ['fractional days', { days: 1.5 }],
    ['days as a string', { days: '3' }],
    ['an unknown persona', { persona: 'couch' }],
    ['an empty external_ref', { external_ref: '' }],
    ['an external_ref over 255 characters', { external_ref: 'x'.repeat(256) }],
  ])('refuses %s with a 400 problem and writes nothing', async (_name, body) => {
    expectProblem(await demo(other.id, body), 400);
    expect((await t.call('GET', '/v1/users', { key: other.apiKey })).json()).toEqual({ data: [], next_cursor: null });
  });

  it('an unknown or malformed tenant_id is a 404; a tenant key is a 403; no key a 401', async () => {
    expectProblem(await demo('00000000-0000-4000-8000-000000000000', {}), 404);
    expectProblem(await demo('nope', {}), 404);
    expectProblem(await demo(tenant.id, {}, tenant.apiKey), 403);
    expectProblem(await t.call('POST', `/v1/admin/tenants/${tenant.id}/demo-user`, { body: {} }), 401);
  });

  it("another tenant's demo-user is its own: the same external_ref names a different user", async () => {
    const res = await demo(other.id, { days: 1 });
    expectStatus(res, 200);
    const theirs = res.json() as DemoAnswer;
    expect(theirs.user.id).not.toBe(mix.user.id);
    expectProblem(await t.call('GET', `/v1/users/${theirs.user.id}`, { key: tenant.apiKey }), 404);
  });
});
