import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_A_NDJSON, postUpload, requestFor, waitForEtl } from '../ingest/uploadHelpers.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * GET /v1/users/{id}/rejected-records: the lines coverage counts as `rejected_records` (contracts §3
 * "kept for inspection"), with where they were and why; the console's Pipeline page reads it.
 */
let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let userId: string;

const BAD_LINES = ['{"kind":"quantity","no":"type or value"}', 'this is not JSON'];

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('rejected-a');
  other = await t.createTenant('rejected-b');
  userId = (await t.createUser(tenant.apiKey)).id;
  const token = await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
  const payload = gzipSync(`${FIXTURE_A_NDJSON.trimEnd()}\n${BAD_LINES.join('\n')}\n`);
  expectStatus(await postUpload(t, 'device-a', token.token, 'with-bad-lines', requestFor('device-a', payload)), 202);
  await waitForEtl(t, tenant.apiKey, userId);
});
afterAll(async () => {
  await t?.close();
});

type Rejected = { provider: string; location: string; reason: string; excerpt: string; rejected_at: string };

describe('rejected records', () => {
  it('lists each rejected line once with provider, location, reason and excerpt: as many as coverage counts', async () => {
    const res = await t.call('GET', `/v1/users/${userId}/rejected-records`, { key: tenant.apiKey });
    expectStatus(res, 200);
    const body = res.json() as { data: Rejected[]; next_cursor: string | null };
    const coverage = (await t.call('GET', `/v1/users/${userId}/coverage`, { key: tenant.apiKey })).json() as { rejected_records: number };
    expect(body.data).toHaveLength(coverage.rejected_records);
    expect(body.data.length).toBeGreaterThanOrEqual(BAD_LINES.length);
    expect(body.next_cursor).toBeNull();
    for (const r of body.data) {
      expect(r.provider).toBe('device-a');
      expect(r.reason.length).toBeGreaterThan(0);
      expect(r.location.length).toBeGreaterThan(0);
      expect(Number.isNaN(Date.parse(r.rejected_at))).toBe(false);
    }
    expect(body.data.map((r) => r.excerpt)).toEqual(expect.arrayContaining([expect.stringContaining('this is not JSON')]));
  });

  it('pages with limit and cursor without losing or repeating a record, and filters by provider', async () => {
    const all = ((await t.call('GET', `/v1/users/${userId}/rejected-records`, { key: tenant.apiKey })).json() as { data: Rejected[] }).data;
    const seen: Rejected[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = { limit: '1', ...(cursor ? { cursor } : {}) };
      const page = (await t.call('GET', `/v1/users/${userId}/rejected-records`, { key: tenant.apiKey, query })).json() as { data: Rejected[]; next_cursor: string | null };
      seen.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    const none = (await t.call('GET', `/v1/users/${userId}/rejected-records`, { key: tenant.apiKey, query: { provider: 'device-b' } })).json() as { data: Rejected[] };
    expect(none.data).toEqual([]);
  });

  it('bad limit or cursor is 400; a cursor of another filter is 400; another tenant’s, an unknown or a malformed user is 404; no key is 401', async () => {
    const url = `/v1/users/${userId}/rejected-records`;
    expectProblem(await t.call('GET', url, { key: tenant.apiKey, query: { limit: '0' } }), 400);
    expectProblem(await t.call('GET', url, { key: tenant.apiKey, query: { limit: '1001' } }), 400);
    expectProblem(await t.call('GET', url, { key: tenant.apiKey, query: { cursor: 'not-a-cursor' } }), 400);
    const first = (await t.call('GET', url, { key: tenant.apiKey, query: { limit: '1' } })).json() as { next_cursor: string };
    expectProblem(await t.call('GET', url, { key: tenant.apiKey, query: { limit: '1', provider: 'device-a', cursor: first.next_cursor } }), 400);
    expectProblem(await t.call('GET', url, { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', '/v1/users/00000000-0000-4000-8000-000000000000/rejected-records', { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', '/v1/users/nope/rejected-records', { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', url), 401);
  });
});
