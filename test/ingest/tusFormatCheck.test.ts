import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { SNIFF_BYTES } from '../../src/server/routes/importFormats.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { exportXml, zipOf } from '../sources/files/apple-health/exportFixtures.js';
import { tusRequests } from './tusHelpers.js';
import { waitForEtl } from './uploadHelpers.js';

/**
 * contracts §12 for resumable uploads (issue 21): a tus upload whose first bytes cannot be the
 * format its Upload-Metadata declares is refused with 422 at the PATCH that brings them, its
 * staging removed, rather than found out after the whole file was sent.
 */
let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('tus-check');
});
afterAll(async () => t?.close());

const { create, patch, head } = tusRequests(() => t);

async function uploader() {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  return { userId: user.id, token };
}
/** The user's staged upload folders (DATA_DIR/tus/<user>/…). */
const staged = (userId: string) => {
  const dir = join(t.dataDir, 'tus', userId);
  return existsSync(dir) ? readdirSync(dir) : [];
};
const SQLITE_HEADER = Buffer.from('SQLite format 3\u0000', 'latin1');
const pad = (head: Buffer, length: number) => Buffer.concat([head, Buffer.alloc(length - head.length, 0x20)]);

describe('the first bytes of a resumable upload are judged at the PATCH (contracts §12, §13; issue 21)', { timeout: 120_000 }, () => {
  const refused: { label: string; provider: string; body: Buffer; detail: RegExp }[] = [
    { label: 'HTML for apple-health', provider: 'apple-health', body: pad(Buffer.from('<!doctype html><html><body>'), 200_000), detail: /not an Apple Health export/ },
    { label: 'an XML document of another root for apple-health', provider: 'apple-health', body: pad(Buffer.from('<?xml version="1.0"?>\n<ClinicalDocument>'), 200_000), detail: /root is <ClinicalDocument>/ },
    { label: 'gzip for fitbit-takeout (a zip format)', provider: 'fitbit-takeout', body: pad(gzipSync(Buffer.from('x'.repeat(1000))), 200_000), detail: /gzip file, not a zip archive/ },
    { label: 'a bare SQLite database for health-connect (its zip holds one)', provider: 'health-connect', body: pad(SQLITE_HEADER, 200_000), detail: /SQLite database, not a zip archive/ },
    { label: 'plain text for samsung-health', provider: 'samsung-health', body: pad(Buffer.from('com.samsung.health.heart_rate,1,2\n'), 200_000), detail: /not a zip archive/ },
  ];
  for (const c of refused) {
    it(`refuses ${c.label} with 422 at the first PATCH; the upload is gone (410), out of the list, its staging removed`, async () => {
      const { userId, token } = await uploader();
      const created = await create(token, c.body.length * 3, { provider: c.provider, upload_id: 'wrong' });
      expect(created.statusCode).toBe(201);
      const location = created.headers.location as string;
      const res = await patch(token, location, 0, c.body);
      const problem = expectProblem(res, 422);
      expect(problem.detail).toMatch(c.detail);
      expect(staged(userId)).toEqual([]);
      expect((await head(token, location)).statusCode).toBe(410);
      expectProblem(await t.call('GET', `/v1/users/${userId}/uploads/${c.provider}/wrong`, { key: tenant.apiKey }), 404);
    });
  }

  it('PATCHes smaller than the judged head are stored until the one that completes it, which is refused if the head cannot be the format', async () => {
    const { userId, token } = await uploader();
    const body = pad(Buffer.from('not a zip at all'), SNIFF_BYTES + 10_000);
    const location = (await create(token, body.length, { provider: 'fitbit-takeout', upload_id: 'small-steps' })).headers.location as string;
    expect((await patch(token, location, 0, body.subarray(0, 100))).statusCode).toBe(204);
    expect((await patch(token, location, 100, body.subarray(100, 5_000))).statusCode).toBe(204);
    expect(staged(userId)).toHaveLength(1);
    expectProblem(await patch(token, location, 5_000, body.subarray(5_000)), 422);
    expect(staged(userId)).toEqual([]);
  });

  it('an export that can be its format passes the check, whole in one PATCH or in small ones, and is processed; the refused upload_id may be created again', async () => {
    const { userId, token } = await uploader();
    const xml = Buffer.from(exportXml('<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-04-01 08:00:00 +0100" startDate="2024-04-01 08:00:00 +0100" endDate="2024-04-01 08:00:00 +0100" value="70"/>'));
    const first = (await create(token, 1000, { provider: 'apple-health', upload_id: 'again' })).headers.location as string;
    expectProblem(await patch(token, first, 0, pad(Buffer.from('PK\u0005\u0006'), 1000)), 422);
    // The same upload_id, now with a readable export.xml, sent in three PATCHes (all under the head's size).
    const location = (await create(token, xml.length, { provider: 'apple-health', upload_id: 'again' })).headers.location as string;
    const cuts = [0, 10, Math.floor(xml.length / 2), xml.length];
    for (let i = 0; i < 3; i++) expect((await patch(token, location, cuts[i]!, xml.subarray(cuts[i], cuts[i + 1]))).statusCode).toBe(204);
    // And a zip in one PATCH.
    const zip = await zipOf({ 'apple_health_export/export.xml': xml });
    const zipped = (await create(token, zip.length, { provider: 'apple-health', upload_id: 'zipped' })).headers.location as string;
    expect((await patch(token, zipped, 0, zip)).statusCode).toBe(204);
    await waitForEtl(t, tenant.apiKey, userId);
    for (const id of ['again', 'zipped']) {
      const u = (await t.call('GET', `/v1/users/${userId}/uploads/apple-health/${id}`, { key: tenant.apiKey })).json() as UploadResource;
      expect(u.status).toBe('done');
    }
    expectStatus(await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey }), 200);
  });
});
