import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { exportXml, zipOf } from '../sources/files/apple-health/exportFixtures.js';
import { coverage, FIXTURE_A_NDJSON, postUpload, waitForEtl } from './uploadHelpers.js';

/** contracts §12: the outcome of every upload, from the moment of the 202 on. */

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('outcomes');
  other = await t.createTenant('outcomes-other');
});
afterAll(async () => {
  await t?.close();
});

async function uploader(scopes = ['upload']) {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes });
  return { userId: user.id, token };
}

const BAD_LINE = '{"kind":"quantity","broken';
const deviceA = (extraLines: string[] = []) => ({ body: gzipSync([FIXTURE_A_NDJSON.trimEnd(), ...extraLines].join('\n')), contentType: 'application/gzip' });

async function uploadOf(userId: string, provider: string, uploadId: string, key = tenant.apiKey): Promise<UploadResource> {
  const res = await t.call('GET', `/v1/users/${userId}/uploads/${provider}/${uploadId}`, { key });
  expectStatus(res, 200);
  return res.json() as UploadResource;
}

async function finished(userId: string, provider: string, uploadId: string): Promise<UploadResource> {
  await waitForEtl(t, tenant.apiKey, userId);
  return uploadOf(userId, provider, uploadId);
}

describe('the Upload resource (contracts §12)', { timeout: 120_000 }, () => {
  it('exists from the moment of the 202 (status accepted or later, progress null unless processing) and ends done with records per kind', async () => {
    const { userId, token } = await uploader();
    expectStatus(await postUpload(t, 'device-a', token, 'first', deviceA()), 202);
    const right = await uploadOf(userId, 'device-a', 'first');
    expect(right).toMatchObject({ upload_id: 'first', provider: 'device-a', error: null });
    expect(['accepted', 'processing', 'done']).toContain(right.status);
    if (right.status !== 'processing') expect(right.progress).toBeNull();
    const done = await finished(userId, 'device-a', 'first');
    expect(done.status).toBe('done');
    expect(done.records.quantity).toBeGreaterThan(0);
    expect(done.started_at).not.toBeNull();
    expect(done.finished_at).not.toBeNull();
    expect(done.progress).toBeNull();
    expect(Object.keys(done).sort()).toEqual(
      ['upload_id', 'provider', 'bytes', 'status', 'received_at', 'started_at', 'finished_at', 'progress', 'records', 'unchanged', 'rejected', 'rejections', 'error'].sort(),
    );
  });

  it('counts identical bad lines each, in rejected and in coverage rejected_records, naming their 1-based lines (contracts §12)', async () => {
    const { userId, token } = await uploader();
    const lines = FIXTURE_A_NDJSON.trimEnd().split('\n').length;
    expectStatus(await postUpload(t, 'device-a', token, 'bad-lines', deviceA([BAD_LINE, BAD_LINE, BAD_LINE])), 202);
    const done = await finished(userId, 'device-a', 'bad-lines');
    const before = (await coverage(t, tenant.apiKey, userId)).rejected_records;
    expect(done.rejected).toBeGreaterThanOrEqual(3);
    const mine = done.rejections.filter((r) => Number(r.at.replace('line ', '')) > lines);
    expect(mine.map((r) => r.at)).toEqual([`line ${lines + 1}`, `line ${lines + 2}`, `line ${lines + 3}`]);
    expect(before).toBe(done.rejected);
  });

  it('keeps only the first 20 rejections, in order, while counting all', async () => {
    const { userId, token } = await uploader();
    expectStatus(await postUpload(t, 'device-a', token, 'many-bad', deviceA(Array.from({ length: 30 }, () => BAD_LINE))), 202);
    const done = await finished(userId, 'device-a', 'many-bad');
    expect(done.rejected).toBeGreaterThanOrEqual(30);
    expect(done.rejections).toHaveLength(20);
  });

  it('lists uploads newest first, filtered by provider and status, paged', async () => {
    const { userId, token } = await uploader();
    for (const id of ['l-1', 'l-2', 'l-3']) {
      expectStatus(await postUpload(t, 'device-a', token, id, deviceA([`{"kind":"quantity","x":"${id}"`])), 202);
      await new Promise((r) => setTimeout(r, 5));
    }
    await waitForEtl(t, tenant.apiKey, userId);
    const page1 = await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey, query: { limit: '2' } });
    expectStatus(page1, 200);
    const p1 = page1.json() as { data: UploadResource[]; next_cursor: string | null };
    expect(p1.data.map((u) => u.upload_id)).toEqual(['l-3', 'l-2']);
    const page2 = (await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey, query: { limit: '2', cursor: p1.next_cursor! } })).json() as { data: UploadResource[] };
    expect(page2.data.map((u) => u.upload_id)).toEqual(['l-1']);
    const done = (await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey, query: { status: 'done', provider: 'device-a' } })).json() as { data: UploadResource[] };
    expect(done.data).toHaveLength(3);
    const none = (await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey, query: { provider: 'device-b' } })).json() as { data: UploadResource[] };
    expect(none.data).toHaveLength(0);
    expectProblem(await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey, query: { status: 'finished' } }), 400);
  });

  it("answers 404 for another tenant's user and for an unknown upload; the admin mirror reads it", async () => {
    const { userId, token } = await uploader();
    expectStatus(await postUpload(t, 'device-a', token, 'mine', deviceA()), 202);
    expectProblem(await t.call('GET', `/v1/users/${userId}/uploads`, { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/users/${userId}/uploads/device-a/mine`, { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/users/${userId}/uploads/device-a/nope`, { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/users/${userId}/uploads/device-b/mine`, { key: tenant.apiKey }), 404);
    const admin = await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/${userId}/uploads/device-a/mine`, { key: t.adminKey });
    expectStatus(admin, 200);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${other.id}/users/${userId}/uploads`, { key: t.adminKey }), 404);
  });

  it('GET /v1/me/uploads/{provider}/{upload_id}: the uploading user token reads its own upload; a read-only token is 403, another user is 404', async () => {
    const { userId, token } = await uploader();
    expectStatus(await postUpload(t, 'device-a', token, 'me-1', deviceA()), 202);
    await waitForEtl(t, tenant.apiKey, userId);
    const mine = await t.call('GET', '/v1/me/uploads/device-a/me-1', { key: token });
    expectStatus(mine, 200);
    expect((mine.json() as UploadResource).status).toBe('done');
    const { token: readOnly } = await t.mintToken(tenant.apiKey, userId, { scopes: ['read'] });
    expectProblem(await t.call('GET', '/v1/me/uploads/device-a/me-1', { key: readOnly }), 403);
    const stranger = await uploader();
    expectProblem(await t.call('GET', '/v1/me/uploads/device-a/me-1', { key: stranger.token }), 404);
    const res = await t.call('GET', '/v1/me/uploads/device-a/me-1', { key: tenant.apiKey });
    expect([401, 403]).toContain(res.statusCode);
  });

  it('an Apple Health export sent in one request (contracts §13) is processed from the raw store into records, with its outcome', async () => {
    const { userId, token } = await uploader();
    const xml = exportXml(
      [
        '<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-03-01 08:00:00 +0100" startDate="2024-03-01 08:00:00 +0100" endDate="2024-03-01 08:00:00 +0100" value="61"/>',
        '<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-03-01 08:01:00 +0100" startDate="2024-03-01 08:01:00 +0100" endDate="2024-03-01 08:01:00 +0100" value="62"/>',
        '<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" creationDate="2024-03-01 09:00:00 +0100" startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:10:00 +0100" value="500"/>',
      ].join('\n'),
    );
    const zip = await zipOf({ 'apple_health_export/export.xml': xml, 'apple_health_export/export_cda.xml': '<ClinicalDocument/>' });
    expectStatus(await postUpload(t, 'apple-health', token, 'export-1', { body: zip, contentType: 'application/zip' }), 202);
    const done = await finished(userId, 'apple-health', 'export-1');
    expect(done).toMatchObject({ status: 'done', records: { quantity: 3 }, rejected: 0, error: null });
    const samples = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', start: '2024-03-01', end: '2024-03-02', view: 'all' } });
    expectStatus(samples, 200);
    expect((samples.json() as { data: { provider: string }[] }).data.map((s) => s.provider)).toEqual(['apple-health', 'apple-health']);
  });

  it('re-importing the same records under another Upload-Id writes none of them again: they count in unchanged (contracts §13)', async () => {
    const { userId, token } = await uploader();
    const xml = exportXml(
      '<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-04-01 08:00:00 +0100" startDate="2024-04-01 08:00:00 +0100" endDate="2024-04-01 08:00:00 +0100" value="70"/>',
    );
    const newer = exportXml(
      [
        '<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-04-01 08:00:00 +0100" startDate="2024-04-01 08:00:00 +0100" endDate="2024-04-01 08:00:00 +0100" value="70"/>',
        '<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-04-02 08:00:00 +0100" startDate="2024-04-02 08:00:00 +0100" endDate="2024-04-02 08:00:00 +0100" value="71"/>',
      ].join('\n'),
    );
    expectStatus(await postUpload(t, 'apple-health', token, 'old', { body: Buffer.from(xml), contentType: 'application/xml' }), 202);
    expect(await finished(userId, 'apple-health', 'old')).toMatchObject({ records: { quantity: 1 }, unchanged: 0 });
    expectStatus(await postUpload(t, 'apple-health', token, 'new', { body: Buffer.from(newer), contentType: 'application/xml' }), 202);
    expect(await finished(userId, 'apple-health', 'new')).toMatchObject({ records: { quantity: 1 }, unchanged: 1 });
    const samples = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', start: '2024-03-30', end: '2024-04-05', view: 'all' } });
    expect((samples.json() as { data: unknown[] }).data).toHaveLength(2);
  });
});
