import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { zipEntries } from '../fixtures/zip/buildZip.js';
import { zipOf, zipWithDamagedExportXml } from '../sources/files/apple-health/exportFixtures.js';
import { samsungCsv } from '../sources/files/samsung-health/samsungExport.js';
import { tusRequests } from './tusHelpers.js';
import { waitForUpload } from './uploadHelpers.js';

/**
 * contracts §17 end to end: an apple-health upload whose first bytes pass the request's check but
 * which cannot be read as an export ends `failed` with the reason, like samsung-health and
 * fitbit-takeout — never `done` with nothing stored.
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
