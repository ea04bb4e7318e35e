import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadStream } from '../../commands/ingestion/upload.js';
import { INLINE_PAYLOAD_MAX_BYTES } from '../../src/rawstore/inlinePayload.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { deviceAForm, listFiles, postUpload, waitForUpload } from './uploadHelpers.js';

/**
 * Issue 37 ("acceptance is one durable write"): a small upload is kept in its acceptance event,
 * sealed, and no file of the raw store is written for it; a body over the inline bound still goes
 * to the raw store. Both read back the same.
 */
let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('inline');
});
afterAll(async () => t?.close());

/** `n` heart-rate lines of device-a, gzip-compressed; `pad` characters of text on each to make them large. */
function heartRates(n: number, pad = 0): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const at = new Date(Date.parse('2026-11-01T00:00:00Z') + i * 60_000).toISOString();
    lines.push(JSON.stringify({ kind: 'quantity', uuid: randomUUID(), type: 'HKQuantityTypeIdentifierHeartRate', value: 60 + (i % 40), unit: 'count/min', start_date: at, end_date: at, source_name: 'Watch', metadata: { note: randomBytes(24 * pad).toString('base64') } }));
  }
  return gzipSync(lines.join('\n'));
}

const rawFiles = () => listFiles(join(t.dataDir, 'raw'));

async function uploaded(body: Buffer) {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  const uploadId = `inline-${randomUUID()}`;
  expectStatus(await postUpload(t, 'device-a', token, uploadId, deviceAForm(body)), 202);
  await waitForUpload(t, tenant.apiKey, user.id, 'device-a', uploadId);
  const [accepted] = await t.ctx.eventStore.readStream(uploadStream(user.id, 'device-a', uploadId), { maxCount: 1 });
  const upload = (await t.call('GET', `/v1/users/${user.id}/uploads/device-a/${uploadId}`, { key: tenant.apiKey })).json() as { status: string; records: Record<string, number> };
  return { accepted: accepted!.data as { object_key: string; inline_payload?: string }, upload };
}

describe('small uploads are kept in their acceptance (issue 37: one durable write per upload)', () => {
  it('a one-line upload writes no raw file: its sealed payload is in upload.accepted, and it is processed from there', async () => {
    const before = rawFiles();
    const { accepted, upload } = await uploaded(heartRates(1));
    expect(rawFiles()).toEqual(before);
    expect(accepted.object_key).toMatch(/^inline:[0-9a-f]{64}$/);
    // Sealed: the event holds no plain text of the line.
    expect(Buffer.from(accepted.inline_payload!, 'base64').toString('latin1')).not.toContain('HKQuantityTypeIdentifierHeartRate');
    expect(upload).toMatchObject({ status: 'done', records: { quantity: 1 } });
  });

  it(`a body over ${INLINE_PAYLOAD_MAX_BYTES} bytes still goes to the raw store, and reads back the same`, async () => {
    const big = heartRates(400, 8);
    expect(big.length).toBeGreaterThan(INLINE_PAYLOAD_MAX_BYTES);
    const before = rawFiles().length;
    const { accepted, upload } = await uploaded(big);
    expect(rawFiles().length).toBe(before + 1);
    expect(accepted.inline_payload).toBeUndefined();
    expect(upload).toMatchObject({ status: 'done', records: { quantity: 400 } });
  });
});
