import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { zipEntries } from '../fixtures/zip/buildZip.js';
import { zipOf, zipWithDamagedExportXml } from '../sources/files/apple-health/exportFixtures.js';
import { samsungCsv } from '../sources/files/samsung-health/samsungExport.js';
import { tusRequests } from './tusHelpers.js';
import { postUpload, requestFor, waitForUpload } from './uploadHelpers.js';
import { buildHealthConnectZip } from '../fixtures/health-connect/buildHealthConnectExport.js';
import { gzipSync } from 'node:zlib';

/**
 * contracts §17 end to end: one rule for an unreadable file in every format. What the request can
 * see is refused there with 422 (test/ingest/uploadContentTypes.test.ts); a file whose first bytes
 * pass that check but which cannot be read as its format ends `failed` with the reason, never
 * `done` with nothing stored. One case at least per format family: apple-health here first, then
 * the other exports (zip archives) and the device uploads (NDJSON, JSON).
 */
let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('unreadable-imports');
});
afterAll(async () => t?.close());

const { create, patch } = tusRequests(() => t);
const FIXTURE = readFileSync(fileURLToPath(new URL('../fixtures/apple-health/export.zip', import.meta.url)));
const DEVICE_B = readFileSync(fileURLToPath(new URL('../fixtures/device-b/upload.json', import.meta.url)));
const half = (b: Buffer) => b.subarray(0, Math.floor(b.length / 2));
const stored = (u: UploadResource) => Object.values(u.records).reduce((a, n) => a + n, 0);

async function outcomeOf(body: Buffer, provider: string): Promise<UploadResource> {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  const location = (await create(token, body.length, { provider, upload_id: 'export' })).headers.location as string;
  expect((await patch(token, location, 0, body)).statusCode).toBe(204);
  await waitForUpload(t, tenant.apiKey, user.id, provider, 'export');
  return (await t.call('GET', `/v1/users/${user.id}/uploads/${provider}/export`, { key: tenant.apiKey })).json() as UploadResource;
}

describe('an unreadable apple-health export ends failed with the reason (contracts §17)', { timeout: 120_000 }, () => {
  const samsung = () =>
    zipEntries([samsungCsv('com.samsung.health.weight', ['weight', 'start_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [[70.5, '2025-01-01 08:00:00.000', 'UTC+0100', 'd1', 'com.sec.android.app.shealth', 'u1']])]);
  const cases: { label: string; body: () => Promise<Buffer>; error: RegExp }[] = [
    { label: 'the fixture export.zip cut in half', body: async () => FIXTURE.subarray(0, Math.floor(FIXTURE.length / 2)), error: /not a readable zip archive/ },
    { label: 'an export.zip whose export.xml is damaged from its first byte', body: zipWithDamagedExportXml, error: /^apple_health_export\/export\.xml: .*(cannot be read|could not be read)/ },
    { label: 'a zip of unrelated files', body: () => zipOf({ 'photos/beach.jpg': Buffer.alloc(70_000, 7), 'notes.txt': 'hello' }), error: /not an Apple Health export: the archive holds no export\.xml; it holds photos\/beach\.jpg, notes\.txt/ },
    { label: 'a Samsung Health export sent as apple-health', body: samsung, error: /the archive holds no export\.xml; it holds samsunghealth_/ },
  ];
  for (const c of cases) {
    it(`${c.label}: failed, the reason in error, no records`, async () => {
      const upload = await outcomeOf(await c.body(), 'apple-health');
      expect(upload.status).toBe('failed');
      expect(upload.error).toMatch(c.error);
      expect(Object.values(upload.records ?? {}).reduce((a: number, n) => a + (n as number), 0)).toBe(0);
    });
  }

  it('the same Samsung export sent as samsung-health is done with its record (the rule is the format, not the bytes)', async () => {
    const upload = await outcomeOf(await samsung(), 'samsung-health');
    expect(upload.status).toBe('done');
  });
});

describe('an unreadable file of every other format ends failed with the reason (contracts §17)', { timeout: 120_000 }, () => {
  const unrelated = () => zipEntries([{ name: 'photos/beach.jpg', data: Buffer.alloc(70_000, 7) }, { name: 'notes.txt', data: Buffer.from('hello') }]);
  const fitbit = () =>
    zipEntries([
      { name: 'Takeout/Fitbit/Personal & Account/Profile.csv', data: Buffer.from('id,full_name,timezone,locale\nABC,Someone,Europe/Berlin,en_US\n') },
      { name: 'Takeout/Fitbit/Global Export Data/weight-2024-07-01.json', data: Buffer.from(JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ logId: i, weight: 150, bmi: 22, date: '07/01/24', time: '07:00:00', source: 'API' })))) },
    ]);
  const samsungMany = () =>
    zipEntries([samsungCsv('com.samsung.health.weight', ['weight', 'start_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], Array.from({ length: 500 }, (_, i) => [70.5, '2025-01-01 08:00:00.000', 'UTC+0100', 'd1', 'com.sec.android.app.shealth', `u${i}`]))]);
  const exports: { provider: string; label: string; body: () => Promise<Buffer>; error: RegExp }[] = [
    { provider: 'health-connect', label: 'an export cut in half', body: async () => half(await buildHealthConnectZip()), error: /^archive: not a readable zip archive/ },
    { provider: 'health-connect', label: 'a zip of unrelated files', body: unrelated, error: /not a Health Connect export: the archive holds no health_connect_export\.db/ },
    { provider: 'health-connect', label: 'a zip whose database is damaged', body: () => zipEntries([{ name: 'health_connect_export.db', data: Buffer.concat([Buffer.from('SQLite format 3\u0000'), Buffer.alloc(8192, 0xab)]) }]), error: /health_connect_export\.db is truncated/ },
    { provider: 'fitbit-takeout', label: 'a Takeout cut in half', body: async () => half(await fitbit()), error: /^archive: not a readable zip archive/ },
    { provider: 'fitbit-takeout', label: 'a zip of unrelated files', body: unrelated, error: /not a Fitbit export/ },
    { provider: 'samsung-health', label: 'an export cut in half', body: async () => half(await samsungMany()), error: /^archive: not a readable zip archive/ },
    { provider: 'samsung-health', label: 'a zip of unrelated files', body: unrelated, error: /not a Samsung Health export/ },
  ];
  for (const c of exports) {
    it(`${c.provider}, ${c.label}: failed, the reason in error, no records`, async () => {
      const upload = await outcomeOf(await c.body(), c.provider);
      expect(upload.status).toBe('failed');
      expect(upload.error).toMatch(c.error);
      expect(stored(upload)).toBe(0);
    });
  }

  const uploads: { slug: string; label: string; body: () => Buffer; error: RegExp }[] = [
    { slug: 'device-a', label: 'a gzip of which no line is JSON', body: () => gzipSync('hello world\nthis is not json\n'), error: /^not a HealthKit NDJSON upload: not one of its 2 lines is a JSON object$/ },
    { slug: 'device-b', label: 'JSON cut in half', body: () => half(DEVICE_B), error: /^not a readable Health Connect upload: body is not valid JSON/ },
    { slug: 'device-b', label: 'JSON without a records array', body: () => Buffer.from('{"hello": [1, 2, 3]}'), error: /^not a readable Health Connect upload: body is not an object with a "records" array$/ },
  ];
  for (const c of uploads) {
    it(`${c.slug}, ${c.label}: failed, the reason in error, no records, what it read kept as rejections`, async () => {
      const user = await t.createUser(tenant.apiKey);
      const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
      const body = c.body();
      const res = await postUpload(t, c.slug, token, 'upload', c.slug === 'device-a' ? requestFor(c.slug, body) : { body, contentType: 'application/json' });
      expect(res.statusCode).toBe(202);
      await waitForUpload(t, tenant.apiKey, user.id, c.slug, 'upload');
      const upload = (await t.call('GET', `/v1/users/${user.id}/uploads/${c.slug}/upload`, { key: tenant.apiKey })).json() as UploadResource;
      expect(upload).toMatchObject({ status: 'failed', error: expect.stringMatching(c.error) });
      expect(stored(upload)).toBe(0);
      expect(upload.rejected).toBeGreaterThan(0);
    });
  }
});
