import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadStream } from '../../commands/ingestion/upload.js';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { buildGadgetbridgeExport } from '../fixtures/device-c/buildGadgetbridgeExport.js';
import { buildHealthConnectDatabase, buildHealthConnectZip } from '../fixtures/health-connect/buildHealthConnectExport.js';
import { withCheckBomb, withGeneratedColumnBomb } from '../fixtures/sqlite/sqliteBombs.js';
import { zipEntries } from '../fixtures/zip/buildZip.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tusRequests } from './tusHelpers.js';
import { postUpload, waitForUpload } from './uploadHelpers.js';

/**
 * contracts §18, issue 34 §1: an uploaded SQLite database whose schema makes SQLite run the
 * sender's SQL (a CHECK constraint, a generated column's NOT NULL, both evaluated on every row by
 * the integrity check) is refused at the request with 422 naming why, nothing stored, and is
 * checked off the thread that serves requests; one that reaches the ETL (a resumable upload)
 * ends `failed` with the reason instead of holding the ETL thread.
 *
 * Before issue 34 each of these uploads was accepted (202) after seconds of the HTTP thread or
 * the ETL thread evaluating the bomb; with 10,000 rows instead of 50, for minutes.
 */
let t: TestApp;
let tenant: TenantHandle;
let other: { apiKey: string; userId: string };
beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('untrusted-db');
  const otherTenant = await t.createTenant('untrusted-db-neighbour');
  other = { apiKey: otherTenant.apiKey, userId: (await t.createUser(otherTenant.apiKey)).id };
});
afterAll(async () => t?.close());

async function uploader() {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  return { userId: user.id, token };
}

async function nothingStored(userId: string, slug: string, uploadId: string) {
  expect(await t.ctx.eventStore.readStream(uploadStream(userId, slug, uploadId))).toEqual([]);
  expectProblem(await t.call('GET', `/v1/users/${userId}/uploads/${slug}/${uploadId}`, { key: tenant.apiKey }), 404);
}

const BOMBS = [
  { label: 'a CHECK constraint bomb', bomb: withCheckBomb, named: /CHECK constraints in tables \(bomb_check\)/ },
  { label: 'a generated-column NOT NULL bomb', bomb: withGeneratedColumnBomb, named: /generated columns computed by more than arithmetic over stored columns \(bomb_generated\.x\)/ },
] as const;

describe('an uploaded SQLite database whose schema runs the sender\'s SQL is refused (contracts §18, issue 34 §1)', { timeout: 120_000 }, () => {
  for (const { label, bomb, named } of BOMBS) {
    it(`contracts §18: POST /v1/ingest/device-c of a Gadgetbridge export holding ${label} is answered 422 naming why, nothing stored, while another tenant is answered`, async () => {
      const { userId, token } = await uploader();
      const refused = postUpload(t, 'device-c', token, 'bomb', { body: bomb(buildGadgetbridgeExport()), contentType: 'application/vnd.sqlite3' });
      const neighbour = t.call('GET', `/v1/users/${other.userId}/coverage`, { key: other.apiKey });
      expectStatus(await neighbour, 200);
      const problem = expectProblem(await refused, 422);
      expect(problem.detail).toMatch(/^device-c: not a Gadgetbridge export, refused before its integrity check: /);
      expect(problem.detail).toMatch(named);
      await nothingStored(userId, 'device-c', 'bomb');
    });

    it(`contracts §18: raw POST /v1/ingest/health-connect of an export zip holding ${label} is answered 422 naming why, nothing stored`, async () => {
      const { userId, token } = await uploader();
      const zip = await zipEntries([{ name: 'health_connect_export.db', data: bomb(buildHealthConnectDatabase()) }]);
      const problem = expectProblem(await postUpload(t, 'health-connect', token, 'bomb', { body: zip, contentType: 'application/zip' }), 422);
      expect(problem.detail).toMatch(/health_connect_export\.db is refused before its integrity check/);
      expect(problem.detail).toMatch(named);
      await nothingStored(userId, 'health-connect', 'bomb');
    });

    it(`contracts §18: a resumable health-connect upload holding ${label} ends failed with the reason (the ETL job refuses it, it does not hang)`, async () => {
      const { userId, token } = await uploader();
      const zip = await zipEntries([{ name: 'health_connect_export.db', data: bomb(buildHealthConnectDatabase()) }]);
      const { create, patch } = tusRequests(() => t);
      const created = await create(token, zip.length, { provider: 'health-connect', upload_id: 'tus-bomb' });
      expect(created.statusCode).toBe(201);
      expect((await patch(token, created.headers.location as string, 0, zip)).statusCode).toBe(204);
      await waitForUpload(t, tenant.apiKey, userId, 'health-connect', 'tus-bomb');
      const upload = (await t.call('GET', `/v1/users/${userId}/uploads/health-connect/tus-bomb`, { key: tenant.apiKey })).json() as UploadResource;
      expect(upload.status).toBe('failed');
      expect(upload.error).toMatch(named);
    });
  }

  it('the real exports still pass the request-time check: a Gadgetbridge database and a Health Connect zip are accepted (202)', async () => {
    const { token } = await uploader();
    expectStatus(await postUpload(t, 'device-c', token, 'real-c', { body: buildGadgetbridgeExport(), contentType: 'application/vnd.sqlite3' }), 202);
    expectStatus(await postUpload(t, 'health-connect', token, 'real-hc', { body: await buildHealthConnectZip(), contentType: 'application/zip' }), 202);
  });
});
