import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PATH_SEGMENT } from '../../src/server/buildServer.js';
import { expectProblem, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { exportXml, zipOf } from '../sources/files/apple-health/exportFixtures.js';
import { tusRequests } from '../ingest/tusHelpers.js';

/**
 * contracts §17: every route accepts an identifier of the full length its rule allows. An
 * Upload-Id of 128 characters (the rule's longest, commands/ingestion/acceptUpload.ts) reaches the
 * tus upload address, the Upload resource and /v1/me/uploads; the router's cap on a path segment
 * (fastify's 100 by default, answered 414) is no shorter than any route's rule.
 */
let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
const { create, patch, head, terminate } = tusRequests(() => t);
const longId = (n: number, tag: string) => `${tag}-${'x'.repeat(n - tag.length - 1)}`;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('id-lengths');
  other = await t.createTenant('id-lengths-other');
});
afterAll(async () => t?.close());

async function uploader(apiKey = tenant.apiKey) {
  const user = await t.createUser(apiKey);
  const { token } = await t.mintToken(apiKey, user.id, { scopes: ['upload'] });
  return { userId: user.id, token };
}

describe('identifiers of the full length their rule allows (contracts §17)', { timeout: 60_000 }, () => {
  it('a 128-character tus upload_id is created, resumed (HEAD), finished (PATCH) and read at the Upload resource, its admin copy and /v1/me/uploads', async () => {
    const { userId, token } = await uploader();
    const id = longId(128, 'apple');
    expect(id).toHaveLength(128);
    const at = '2024-05-01 08:00:00 +0000';
    const body = await zipOf({ 'apple_health_export/export.xml': exportXml(`<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="${at}" startDate="${at}" endDate="${at}" value="61"/>`) });

    const created = await create(token, body.length, { provider: 'apple-health', upload_id: id });
    expect(created.statusCode).toBe(201);
    const location = created.headers.location as string;
    expect(location).toBe(`/v1/uploads/tus/apple-health/${id}`);
    const resumed = await head(token, location);
    expect(resumed.statusCode).toBe(200);
    expect(resumed.headers['upload-offset']).toBe('0');
    expect((await patch(token, location, 0, body)).statusCode).toBe(204);
    expect((await head(token, location)).headers['upload-offset']).toBe(String(body.length));

    const resource = await t.call('GET', `/v1/users/${userId}/uploads/apple-health/${id}`, { key: tenant.apiKey });
    expect(resource.statusCode).toBe(200);
    expect(resource.json()).toMatchObject({ upload_id: id, bytes: body.length });
    const mine = await t.call('GET', `/v1/me/uploads/apple-health/${id}`, { key: token });
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toMatchObject({ upload_id: id });
    const admin = await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/${userId}/uploads/apple-health/${id}`, { key: t.adminKey });
    expect(admin.statusCode).toBe(200);

    // Still another tenant's and another user's: 404 at every address that names it.
    const stranger = await uploader(other.apiKey);
    expect((await head(stranger.token, location)).statusCode).toBe(404);
    expectProblem(await patch(stranger.token, location, 0, Buffer.from('x')), 404);
    expectProblem(await t.call('GET', `/v1/me/uploads/apple-health/${id}`, { key: stranger.token }), 404);
    expectProblem(await t.call('GET', `/v1/users/${userId}/uploads/apple-health/${id}`, { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${other.id}/users/${userId}/uploads/apple-health/${id}`, { key: t.adminKey }), 404);
  });

  it('a 128-character tus upload_id is terminated by DELETE; 129 characters are refused at creation and 404 at the address, never 414', async () => {
    const { token } = await uploader();
    const id = longId(128, 'ended');
    const created = await create(token, 10, { provider: 'apple-health', upload_id: id });
    expect(created.statusCode).toBe(201);
    expect((await terminate(token, created.headers.location as string)).statusCode).toBe(204);
    expect((await head(token, created.headers.location as string)).statusCode).toBe(410);

    const tooLong = longId(129, 'over');
    expectProblem(await create(token, 10, { provider: 'apple-health', upload_id: tooLong }), 400);
    expect((await head(token, `/v1/uploads/tus/apple-health/${tooLong}`)).statusCode).toBe(404);
    expectProblem(await t.call('GET', `/v1/me/uploads/apple-health/${tooLong}`, { key: token }), 400);
  });

  it("the router's cap on a path segment is the longest any route's rule allows: no documented path parameter is longer, and a longer segment is still 414", async () => {
    const doc = t.app.swagger() as unknown as { paths: Record<string, Record<string, { parameters?: { in: string; name: string; schema?: { maxLength?: number } }[] }>> };
    const lengths = Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.schema?.maxLength ?? 0)));
    expect(lengths.length).toBeGreaterThan(50);
    expect(Math.max(...lengths)).toBe(MAX_PATH_SEGMENT);
    const { token } = await uploader();
    expect((await head(token, `/v1/uploads/tus/apple-health/${'y'.repeat(MAX_PATH_SEGMENT)}`)).statusCode).toBe(404);
    expect((await head(token, `/v1/uploads/tus/apple-health/${'y'.repeat(MAX_PATH_SEGMENT + 1)}`)).statusCode).toBe(414);
  });
});
