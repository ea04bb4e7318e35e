import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { expectProblem, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { exportXml, zipOf } from '../sources/files/apple-health/exportFixtures.js';
import { waitForEtl } from './uploadHelpers.js';
import { TUS, tusMetadata as meta, tusRequests } from './tusHelpers.js';

/** contracts §13: resumable uploads by tus 1.0 (core, creation, termination, expiration). */

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

beforeAll(async () => {
  t = await startTestApp({ IMPORT_MAX_BYTES: String(8 * 1024 * 1024) });
  tenant = await t.createTenant('tus');
  other = await t.createTenant('tus-other');
});
afterAll(async () => {
  await t?.close();
});

const { create, patch, head, terminate } = tusRequests(() => t);

async function uploader(apiKey = tenant.apiKey, scopes = ['upload']) {
  const user = await t.createUser(apiKey);
  const { token } = await t.mintToken(apiKey, user.id, { scopes });
  return { userId: user.id, token };
}

/** A small Apple export with `n` heart-rate records, padded past 1 MiB so it spans several sealed chunks. */
async function appleExport(n: number): Promise<Buffer> {
  const records = Array.from({ length: n }, (_, i) => {
    const at = new Date(Date.UTC(2024, 4, 1) + i * 60_000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000');
    return `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="${at}" startDate="${at}" endDate="${at}" value="${60 + (i % 40)}"/>`;
  });
  return zipOf({ 'apple_health_export/export.xml': exportXml(records.join('\n')), 'apple_health_export/padding.bin': Buffer.alloc(1_500_000, 7) }, { compress: false });
}

describe('tus 1.0 at /v1/uploads/tus (contracts §13)', { timeout: 120_000 }, () => {
  it('OPTIONS names the version, the extensions and the maximum size', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: '/v1/uploads/tus' });
    expect(res.statusCode).toBe(204);
    expect(res.headers['tus-version']).toBe('1.0.0');
    expect(res.headers['tus-extension']).toBe('creation,termination,expiration');
    expect(res.headers['tus-max-size']).toBe(String(8 * 1024 * 1024));
  });

  it('creation, a PATCH dropped part-way, HEAD for the offset, the rest, and the upload is accepted and processed: receiving → done', async () => {
    const { userId, token } = await uploader();
    const body = await appleExport(500);
    const created = await create(token, body.length, { provider: 'apple-health', upload_id: 'export-2024' });
    expect(created.statusCode).toBe(201);
    const location = created.headers.location as string;
    expect(location).toBe('/v1/uploads/tus/apple-health/export-2024');
    expect(created.headers['upload-expires']).toBeTruthy();
    const receiving = (await t.call('GET', `/v1/users/${userId}/uploads/apple-health/export-2024`, { key: tenant.apiKey })).json() as UploadResource;
    expect(receiving).toMatchObject({ status: 'receiving', bytes: body.length });

    // 60 %, then the connection drops: what arrived is kept.
    const cut = Math.floor(body.length * 0.6);
    const first = await patch(token, location, 0, body.subarray(0, cut));
    expect(first.statusCode).toBe(204);
    expect(Number(first.headers['upload-offset'])).toBe(cut);
    const h = await head(token, location);
    expect(h.statusCode).toBe(200);
    expect(h.headers['upload-offset']).toBe(String(cut));
    expect(h.headers['upload-length']).toBe(String(body.length));
    expect(h.headers['cache-control']).toBe('no-store');
    // A PATCH at a stale offset is a conflict and changes nothing.
    expectProblem(await patch(token, location, 0, body.subarray(0, 10)), 409);
    const rest = await patch(token, location, cut, body.subarray(cut));
    expect(rest.statusCode).toBe(204);
    expect(rest.headers['upload-offset']).toBe(String(body.length));
    await waitForEtl(t, tenant.apiKey, userId);
    const done = (await t.call('GET', `/v1/users/${userId}/uploads/apple-health/export-2024`, { key: tenant.apiKey })).json() as UploadResource;
    expect(done).toMatchObject({ status: 'done', records: { quantity: 500 }, bytes: body.length });
  });

  it('the same upload_id again answers its Location; another length is 422; over IMPORT_MAX_BYTES is 413 at creation', async () => {
    const { token } = await uploader();
    const a = await create(token, 1000, { provider: 'samsung-health', upload_id: 'same' });
    expect(a.statusCode).toBe(201);
    const b = await create(token, 1000, { provider: 'samsung-health', upload_id: 'same' });
    expect(b.statusCode).toBe(200);
    expect(b.headers.location).toBe(a.headers.location);
    expectProblem(await create(token, 1001, { provider: 'samsung-health', upload_id: 'same' }), 422);
    expectProblem(await create(token, 8 * 1024 * 1024 + 1, { provider: 'samsung-health', upload_id: 'huge' }), 413);
  });

  it('refuses bad creations: no Upload-Length, unknown provider, bad upload_id, missing Tus-Resumable, a token without upload', async () => {
    const { token } = await uploader();
    const base = { ...TUS, authorization: `Bearer ${token}` };
    expectProblem(await t.app.inject({ method: 'POST', url: '/v1/uploads/tus', headers: { ...base, 'upload-metadata': meta({ provider: 'apple-health', upload_id: 'x' }) } }), 400);
    expectProblem(await create(token, 10, { provider: 'device-a', upload_id: 'x' }), 400);
    expectProblem(await create(token, 10, { provider: 'apple-health', upload_id: 'bad id!' }), 400);
    expectProblem(await t.app.inject({ method: 'POST', url: '/v1/uploads/tus', headers: { authorization: `Bearer ${token}`, 'upload-length': '10', 'upload-metadata': meta({ provider: 'apple-health', upload_id: 'x' }) } }), 412);
    const { token: readOnly } = await uploader(tenant.apiKey, ['read']);
    expectProblem(await create(readOnly, 10, { provider: 'apple-health', upload_id: 'x' }), 403);
    const res = await t.app.inject({ method: 'POST', url: '/v1/uploads/tus', headers: { ...TUS, authorization: `Bearer ${tenant.apiKey}`, 'upload-length': '10' } });
    expect([401, 403]).toContain(res.statusCode);
  });

  it("another user's (or tenant's) upload is 404; more bytes than Upload-Length is 413; a PATCH of another type is 415", async () => {
    const { token } = await uploader();
    const created = await create(token, 16, { provider: 'fitbit-takeout', upload_id: 'small' });
    const location = created.headers.location as string;
    const stranger = await uploader(other.apiKey);
    expect((await head(stranger.token, location)).statusCode).toBe(404);
    expectProblem(await patch(stranger.token, location, 0, Buffer.alloc(4)), 404);
    expectProblem(await terminate(stranger.token, location), 404);
    // Still there for its owner after the stranger's attempts.
    expect((await head(token, location)).statusCode).toBe(200);
    expectProblem(await patch(token, location, 0, Buffer.alloc(17)), 413);
    const wrongType = await t.app.inject({ method: 'PATCH', url: location, headers: { ...TUS, authorization: `Bearer ${token}`, 'upload-offset': '0', 'content-type': 'application/json' }, payload: '{}' });
    expectProblem(wrongType, 415);
  });

  it('termination removes an incomplete upload: HEAD is then 410 and it leaves the uploads list', async () => {
    const { userId, token } = await uploader();
    const created = await create(token, 2_000_000, { provider: 'apple-health', upload_id: 'to-stop' });
    const location = created.headers.location as string;
    // Bytes that may begin an export.zip (its first bytes are judged at the PATCH).
    expect((await patch(token, location, 0, Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(1_200_000, 1)]))).statusCode).toBe(204);
    const del = await terminate(token, location);
    expect(del.statusCode).toBe(204);
    expect((await head(token, location)).statusCode).toBe(410);
    const list = (await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey })).json() as { data: unknown[] };
    expect(list.data).toHaveLength(0);
  });
});
