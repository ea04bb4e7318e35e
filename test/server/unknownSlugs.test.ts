import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTED_SLUGS } from '../../src/catalog/providers.js';
import { UPLOAD_FORMATS } from '../../src/server/routes/uploadFormats.js';
import { IMPORT_SLUGS } from '../../src/sources/registry.js';
import { expectProblem, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tusRequests } from '../ingest/tusHelpers.js';

/** contracts §17 (issue 36): a 404 for a slug the route does not know lists the ones it does. */
let t: TestApp;
let tenant: TenantHandle;
let userId: string;
const { create } = tusRequests(() => t);

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('unknown-slugs');
  userId = (await t.createUser(tenant.apiKey)).id;
});
afterAll(async () => t?.close());

const detailOf = (res: Awaited<ReturnType<TestApp['call']>>, status: number) => expectProblem(res, status).detail as string;
const listsAll = (detail: string, slugs: readonly string[]) => {
  expect(slugs.length).toBeGreaterThan(1);
  for (const slug of slugs) expect(detail).toContain(slug);
};

describe('a 404 for an unknown slug names the valid ones (contracts §17)', () => {
  it('POST /v1/ingest/{slug}: every upload slug, before the body is read', async () => {
    const { token } = await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
    const res = await t.call('POST', '/v1/ingest/device-z', { key: token, body: '{}', headers: { 'content-type': 'application/json', 'upload-id': 'u-1' } });
    const detail = detailOf(res, 404);
    expect(detail).toMatch(/unknown upload slug device-z/);
    listsAll(detail, Object.keys(UPLOAD_FORMATS));
  });

  it('the tus creation with an unknown provider (400) lists the import slugs', async () => {
    const { token } = await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
    const res = await create(token, 10, { provider: 'apple-wealth', upload_id: 'u-2' });
    expect(res.statusCode).toBe(400);
    listsAll((res.json() as { detail: string }).detail, IMPORT_SLUGS);
  });

  it('connect, disconnect, sync and provider keys with an unknown provider list the connected providers; erasure lists every provider slug', async () => {
    const cases = [
      await t.call('POST', `/v1/users/${userId}/connections/ourra`, { key: tenant.apiKey, body: {} }),
      await t.call('DELETE', `/v1/users/${userId}/connections/ourra`, { key: tenant.apiKey }),
      await t.call('POST', `/v1/users/${userId}/connections/ourra/sync`, { key: tenant.apiKey, body: {} }),
      await t.call('GET', `/v1/admin/tenants/${tenant.id}/providers/ourra/keys`, { key: t.adminKey }),
    ];
    for (const res of cases) {
      const detail = detailOf(res, 404);
      expect(detail).toMatch(/unknown provider ourra/);
      listsAll(detail, CONNECTED_SLUGS);
    }
    const erasure = detailOf(await t.call('DELETE', `/v1/users/${userId}/data/ourra`, { key: tenant.apiKey }), 404);
    listsAll(erasure, [...CONNECTED_SLUGS, ...IMPORT_SLUGS]);
  });
});
