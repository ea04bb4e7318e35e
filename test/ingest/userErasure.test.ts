import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INLINE_PAYLOAD_MAX_BYTES } from '../../src/rawstore/inlinePayload.js';
import { rawNamespace } from '../../src/rawstore/rawNamespaces.js';
import { SAMPLE_KEY_RUNS } from '../../projections/records/sampleBlocks/recentLocators.js';
import { SAMPLE_BLOCKS, SAMPLE_KEYS, userLocators } from '../../projections/records/sampleBlocks/sampleBlock.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

const fixture = readFileSync(fileURLToPath(new URL('../fixtures/device-a/healthkit-export.ndjson', import.meta.url)));

function multipart(file: Buffer): { body: Buffer; contentType: string } {
  const boundary = 'wellstream-test-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="export.ndjson.gz"\r\nContent-Type: application/gzip\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function waitFor(check: () => Promise<boolean>, ms = 20_000) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('user deletion erases the user’s ingested data (States: User, deleting → removed; Deletion job: done)', () => {
  let t: TestApp;
  let tenant: TenantHandle;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await t.createTenant();
  });
  afterAll(async () => t.close());

  // Over the inline bound (src/rawstore/inlinePayload.ts): the payload is an object of the raw store,
  // whose erasure is what this test is about (a small one goes with its upload's stream).
  const padded = gzipSync(
    `${fixture}\n${Array.from({ length: 800 }, (_, i) => JSON.stringify({ kind: 'quantity', uuid: randomBytes(16).toString('hex'), type: 'HKQuantityTypeIdentifierHeartRate', value: 60, unit: 'count/min', start_date: new Date(Date.UTC(2026, 9, 1, 0, i)).toISOString(), end_date: new Date(Date.UTC(2026, 9, 1, 0, i)).toISOString(), source_name: randomBytes(48).toString('base64') })).join('\n')}`,
  );

  async function uploadFor(userId: string, uploadId: string) {
    const { token } = await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
    expect(padded.length).toBeGreaterThan(INLINE_PAYLOAD_MAX_BYTES);
    const { body, contentType } = multipart(padded);
    const res = await t.call('POST', '/v1/ingest/device-a', { key: token, body, headers: { 'content-type': contentType, 'upload-id': uploadId } });
    expect(res.statusCode, res.body).toBe(202);
    await waitFor(async () => {
      const cov = (await t.call('GET', `/v1/users/${userId}/coverage`, { key: tenant.apiKey })).json() as { pending_jobs: number; days: unknown[] };
      return cov.pending_jobs === 0 && cov.days.length > 0;
    });
  }

  // Samples are stored as blocks and their locators (docs/sample-blocks.md).
  // A locator names its user by its `_id`'s first characters (sampleBlock.ts), not a user_id field.
  const ownedBy = (collection: string, userId: string) => (collection === SAMPLE_KEYS ? userLocators(userId) : { user_id: userId });
  // The locators' recent tier (runs, recentLocators.ts) names its user by user_id.
  const recordCollections = [SAMPLE_BLOCKS, 'category_samples', SAMPLE_KEYS, SAMPLE_KEY_RUNS, 'sleep_sessions', 'workouts', 'ecg_recordings', 'heartbeat_series', 'etl_jobs', 'rejected_records'];

  it('a done deletion job leaves no row and no raw payload of the user, and leaves another user with the same upload intact', async () => {
    const gone = await t.createUser(tenant.apiKey);
    const kept = await t.createUser(tenant.apiKey);
    await uploadFor(gone.id, 'same-bytes');
    await uploadFor(kept.id, 'same-bytes');
    for (const c of recordCollections.slice(0, 2)) expect(await t.ctx.readStore.count(c, ownedBy(c, gone.id)), c).toBeGreaterThan(0);
    // The user's locators, in sample_keys or still in the recent tier's runs.
    expect((await t.ctx.readStore.count(SAMPLE_KEYS, ownedBy(SAMPLE_KEYS, gone.id))) + (await t.ctx.readStore.count(SAMPLE_KEY_RUNS, ownedBy(SAMPLE_KEY_RUNS, gone.id))), 'locators').toBeGreaterThan(0);
    expect(existsSync(join(t.dataDir, 'raw', rawNamespace(gone.id, 'device-a', 0)))).toBe(true);

    const job = await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, gone.id));
    expect(job.status).toBe('done');
    await t.ctx.projectors.waitForIdle();
    for (const c of recordCollections) expect(await t.ctx.readStore.count(c, ownedBy(c, gone.id)), c).toBe(0);
    expect(existsSync(join(t.dataDir, 'raw', rawNamespace(gone.id, 'device-a', 0)))).toBe(false);

    // The other user's identical upload is a separate object and untouched.
    expect(readdirSync(join(t.dataDir, 'raw', rawNamespace(kept.id, 'device-a', 0))).length).toBeGreaterThan(0);
    const samples = await t.call('GET', `/v1/users/${kept.id}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', view: 'all' } });
    expect((samples.json() as { data: unknown[] }).data.length).toBeGreaterThan(0);
  });
});
