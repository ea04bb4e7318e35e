import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { dataKeyId } from '../../src/crypto/dataKeys.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { exportXml } from '../sources/files/apple-health/exportFixtures.js';
import { postUpload, waitForEtl } from '../ingest/uploadHelpers.js';

/**
 * The record ledger behind `unchanged` (contracts §13) is keyed by the data key of the user's
 * provider data: a user deletion destroys the key (crypto-shredding), and the ledger's rows must
 * then be readable by nobody. Its rows hold only HMACs under that key: no user id, upload stream
 * or value, before or after the deletion.
 */
const record = (day: string, value: number) =>
  `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-04-${day} 08:00:00 +0100" startDate="2024-04-${day} 08:00:00 +0100" endDate="2024-04-${day} 08:00:00 +0100" value="${value}"/>`;
const XML = Buffer.from(exportXml([record('01', 70), record('02', 71)].join('\n')));

let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('ledger-erasure');
});
afterAll(async () => t?.close());

async function importedBy(uploadId: string): Promise<{ userId: string; upload: () => Promise<UploadResource> }> {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  expectStatus(await postUpload(t, 'apple-health', token, uploadId, { body: XML, contentType: 'application/xml' }), 202);
  await waitForEtl(t, tenant.apiKey, user.id);
  const upload = async () => (await t.call('GET', `/v1/users/${user.id}/uploads/apple-health/${uploadId}`, { key: tenant.apiKey })).json() as UploadResource;
  return { userId: user.id, upload };
}

/** Every byte of the ledger's files (the database, its write-ahead log), as latin1 text to search. */
function ledgerBytes(): string {
  const base = join(t.dataDir, 'record-ledger.sqlite');
  return ['', '-wal'].map((s) => base + s).filter((p) => existsSync(p)).map((p) => readFileSync(p).toString('latin1')).join('\n');
}

describe('the record ledger and user deletion (issue 21; docs/erasure.md "The record ledger")', { timeout: 120_000 }, () => {
  it('names no user or upload, matches nothing of another user, and after the user is deleted no key remains that could read or match its rows', async () => {
    const gone = await importedBy('first');
    expect(await gone.upload()).toMatchObject({ status: 'done', records: { quantity: 2 }, unchanged: 0 });
    // The same records from another user are that user's own: fingerprints are per user and data key.
    const kept = await importedBy('first');
    expect(await kept.upload()).toMatchObject({ status: 'done', records: { quantity: 2 }, unchanged: 0 });

    const bytes = ledgerBytes();
    expect(bytes.length).toBeGreaterThan(0);
    for (const id of [gone.userId, kept.userId]) expect(bytes).not.toContain(id);

    const job = await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, gone.userId), 30_000);
    expect(job.status).toBe('done');
    // The key every fingerprint and job tag of the deleted user was an HMAC under is destroyed.
    expect(await t.ctx.dataKeys.get(dataKeyId({ userId: gone.userId, provider: 'apple-health', generation: 0 }))).toBeNull();
    expect(ledgerBytes()).not.toContain(gone.userId);

    // The other user's rows still answer: the same export again is unchanged.
    const user = kept.userId;
    const { token } = await t.mintToken(tenant.apiKey, user, { scopes: ['upload'] });
    expectStatus(await postUpload(t, 'apple-health', token, 'again', { body: XML, contentType: 'application/xml' }), 202);
    await waitForEtl(t, tenant.apiKey, user);
    const again = (await t.call('GET', `/v1/users/${user}/uploads/apple-health/again`, { key: tenant.apiKey })).json() as UploadResource;
    expect(again).toMatchObject({ status: 'done', records: {}, unchanged: 2 });
  });
});
