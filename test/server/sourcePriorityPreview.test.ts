import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForEtl } from '../ingest/uploadHelpers.js';
import { readAllPages } from '../support/pages.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * POST /v1/users/{id}/source-priorities/preview (docs/console.md): the merged view of a type and
 * window under an order before it is saved. What it previews is what the merged view answers once
 * the order is saved (spec "Merged view"; contracts §6).
 */
let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let userId: string;
let day: { start: string; end: string };

type Preview = { type: string; order: string[]; records: { id: number; source: string | null; shown_now: boolean; shown: boolean }[] };

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('preview-a');
  other = await t.createTenant('preview-b');
  // The mix persona: heart rate from two sources that overlap all day.
  const demo = await t.call('POST', `/v1/admin/tenants/${tenant.id}/demo-user`, { key: t.adminKey, body: { persona: 'mix', days: 2 } });
  expectStatus(demo, 200);
  userId = (demo.json() as { user: { id: string } }).user.id;
  await waitForEtl(t, tenant.apiKey, userId);
  const first = (await readAllPages(t, tenant.apiKey, `/v1/users/${userId}/samples`, { type: 'heart_rate', view: 'all' }))[0] as { start_date: string };
  const d = first.start_date.slice(0, 10);
  day = { start: d, end: new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) };
});
afterAll(async () => {
  await t?.close();
});

const preview = async (priorities: Record<string, string[]>) => {
  const res = await t.call('POST', `/v1/users/${userId}/source-priorities/preview`, { key: tenant.apiKey, body: { priorities, type: 'heart_rate', ...day } });
  expectStatus(res, 200);
  return res.json() as Preview;
};
const mergedIds = async () => (await readAllPages(t, tenant.apiKey, `/v1/users/${userId}/samples`, { type: 'heart_rate', ...day })).map((r) => (r as { id: number }).id).sort((a, b) => a - b);
const shownIds = (p: Preview, field: 'shown' | 'shown_now') => p.records.filter((r) => r[field]).map((r) => r.id).sort((a, b) => a - b);

describe('source order preview', () => {
  it('under the saved order it shows what the merged view shows; every stored sample of the window is listed', async () => {
    const p = await preview({});
    const all = await readAllPages(t, tenant.apiKey, `/v1/users/${userId}/samples`, { type: 'heart_rate', view: 'all', ...day });
    expect(p.records.map((r) => r.id).sort((a, b) => a - b)).toEqual(all.map((r) => (r as { id: number }).id).sort((a, b) => a - b));
    expect(shownIds(p, 'shown')).toEqual(await mergedIds());
    expect(shownIds(p, 'shown_now')).toEqual(await mergedIds());
  });

  it('under another order it shows what the merged view answers once that order is saved, and saves nothing itself', async () => {
    const before = (await t.call('GET', `/v1/users/${userId}/source-priorities`, { key: tenant.apiKey })).json();
    const flipped = await preview({ heart_rate: ['oura', 'apple'] });
    expect(flipped.order.slice(0, 2)).toEqual(['oura', 'apple']);
    expect(shownIds(flipped, 'shown')).not.toEqual(shownIds(flipped, 'shown_now'));
    expect((await t.call('GET', `/v1/users/${userId}/source-priorities`, { key: tenant.apiKey })).json()).toEqual(before);
    expect(shownIds(flipped, 'shown_now')).toEqual(await mergedIds());

    expectStatus(await t.call('PUT', `/v1/users/${userId}/source-priorities`, { key: tenant.apiKey, body: { priorities: { heart_rate: ['oura', 'apple'] } } }), 200);
    expect(await mergedIds()).toEqual(shownIds(flipped, 'shown'));
    const after = await preview({ heart_rate: ['oura', 'apple'] });
    expect(shownIds(after, 'shown_now')).toEqual(shownIds(after, 'shown'));
  });

  it('bad bodies are 400 and change nothing; another tenant’s or an unknown user is 404; no key is 401', async () => {
    const url = `/v1/users/${userId}/source-priorities/preview`;
    const ok = { priorities: {}, type: 'heart_rate', ...day };
    expectProblem(await t.call('POST', url, { key: tenant.apiKey, body: { ...ok, type: 'not_a_type' } }), 400);
    expectProblem(await t.call('POST', url, { key: tenant.apiKey, body: { ...ok, priorities: { nonsense: ['a'] } } }), 400);
    expectProblem(await t.call('POST', url, { key: tenant.apiKey, body: { ...ok, priorities: { heart_rate: [] } } }), 400);
    expectProblem(await t.call('POST', url, { key: tenant.apiKey, body: { ...ok, start: '2026-01-01', end: '2026-01-09' } }), 400);
    expectProblem(await t.call('POST', url, { key: tenant.apiKey, body: { ...ok, start: 'yesterday' } }), 400);
    expectProblem(await t.call('POST', url, { key: tenant.apiKey, body: { ...ok, start: day.end, end: day.start } }), 400);
    expectProblem(await t.call('POST', url, { key: tenant.apiKey, body: { priorities: {}, type: 'heart_rate' } }), 400);
    expectProblem(await t.call('POST', url, { key: other.apiKey, body: ok }), 404);
    expectProblem(await t.call('POST', '/v1/users/00000000-0000-4000-8000-000000000000/source-priorities/preview', { key: tenant.apiKey, body: ok }), 404);
    expectProblem(await t.call('POST', url, { body: ok }), 401);
  });
});
