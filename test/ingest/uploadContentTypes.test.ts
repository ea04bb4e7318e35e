import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadStream, type UploadAccepted } from '../../commands/ingestion/upload.js';
import { DEVICE_SLUGS, IMPORT_SLUGS } from '../../src/sources/registry.js';
import { UPLOAD_FORMATS } from '../../src/server/routes/uploadFormats.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';
import { FIXTURE_A_NDJSON, fixtureA, fixtureB, fixtureBGzip, fixtureC, multipart, postUpload, waitForEtl, type UploadRequest } from './uploadHelpers.js';

/**
 * Issue 23 finding 1: every upload route takes the content types a user would send for its
 * format (curl's default for --data-binary, the registered SQLite types, a raw gzip, text/plain),
 * judges the body by its first bytes, and answers any other type with a 415 that names the types
 * it takes and shows a curl line that works (contracts §3, §12).
 */

const CURL_DEFAULT = 'application/x-www-form-urlencoded';

let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('content-types');
});
afterAll(async () => {
  await t?.close();
});

async function uploader(): Promise<{ userId: string; token: string }> {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  return { userId: user.id, token };
}

async function accepted(userId: string, slug: string, uploadId: string): Promise<UploadAccepted['data']> {
  const events = await t.ctx.eventStore.readStream(uploadStream(userId, slug, uploadId));
  return events.find((e) => e.type === 'upload.accepted')!.data as UploadAccepted['data'];
}

type Case = { slug: string; label: string; request: () => UploadRequest; stored: Buffer | (() => Buffer); storedAs: string };
const raw = (contentType: string, body: () => Buffer) => () => ({ body: body(), contentType });

const CASES: Case[] = [
  // device-a: a gzip of HealthKit NDJSON, as a form or as the body itself.
  { slug: 'device-a', label: 'multipart, file part application/gzip', request: () => multipart([{ name: 'file', data: fixtureA() }]), stored: fixtureA, storedAs: 'application/gzip' },
  { slug: 'device-a', label: 'multipart, file part application/x-gzip', request: () => multipart([{ name: 'file', contentType: 'application/x-gzip', data: fixtureA() }]), stored: fixtureA, storedAs: 'application/gzip' },
  { slug: 'device-a', label: "multipart, file part application/octet-stream (curl -F's type for a .gz)", request: () => multipart([{ name: 'file', contentType: 'application/octet-stream', data: fixtureA() }]), stored: fixtureA, storedAs: 'application/gzip' },
  { slug: 'device-a', label: 'raw application/gzip', request: raw('application/gzip', fixtureA), stored: fixtureA, storedAs: 'application/gzip' },
  { slug: 'device-a', label: 'raw application/x-gzip', request: raw('application/x-gzip', fixtureA), stored: fixtureA, storedAs: 'application/gzip' },
  { slug: 'device-a', label: 'raw application/octet-stream', request: raw('application/octet-stream', fixtureA), stored: fixtureA, storedAs: 'application/gzip' },
  { slug: 'device-a', label: `raw ${CURL_DEFAULT} (curl --data-binary)`, request: raw(CURL_DEFAULT, fixtureA), stored: fixtureA, storedAs: 'application/gzip' },
  // device-b: Health Connect JSON, plain or gzip, judged by content unless declared application/json.
  { slug: 'device-b', label: 'application/json', request: raw('application/json', fixtureB), stored: fixtureB, storedAs: 'application/json' },
  { slug: 'device-b', label: 'application/json; charset=utf-8', request: raw('application/json; charset=utf-8', fixtureB), stored: fixtureB, storedAs: 'application/json' },
  { slug: 'device-b', label: 'application/json with gzip bytes and no Content-Encoding', request: raw('application/json', fixtureBGzip), stored: fixtureBGzip, storedAs: 'application/json+gzip' },
  { slug: 'device-b', label: 'text/plain holding JSON', request: raw('text/plain', fixtureB), stored: fixtureB, storedAs: 'application/json' },
  { slug: 'device-b', label: `${CURL_DEFAULT} holding JSON (curl --data-binary)`, request: raw(CURL_DEFAULT, fixtureB), stored: fixtureB, storedAs: 'application/json' },
  { slug: 'device-b', label: `${CURL_DEFAULT} holding gzip JSON`, request: raw(CURL_DEFAULT, fixtureBGzip), stored: fixtureBGzip, storedAs: 'application/json+gzip' },
  { slug: 'device-b', label: 'application/gzip', request: raw('application/gzip', fixtureBGzip), stored: fixtureBGzip, storedAs: 'application/json+gzip' },
  { slug: 'device-b', label: 'application/x-gzip', request: raw('application/x-gzip', fixtureBGzip), stored: fixtureBGzip, storedAs: 'application/json+gzip' },
  // device-c: the Gadgetbridge SQLite file under any of the types it is sent as.
  { slug: 'device-c', label: 'application/octet-stream', request: raw('application/octet-stream', fixtureC), stored: fixtureC, storedAs: 'application/vnd.sqlite3' },
  { slug: 'device-c', label: 'application/vnd.sqlite3', request: raw('application/vnd.sqlite3', fixtureC), stored: fixtureC, storedAs: 'application/vnd.sqlite3' },
  { slug: 'device-c', label: 'application/x-sqlite3', request: raw('application/x-sqlite3', fixtureC), stored: fixtureC, storedAs: 'application/vnd.sqlite3' },
  { slug: 'device-c', label: `${CURL_DEFAULT} (curl --data-binary)`, request: raw(CURL_DEFAULT, fixtureC), stored: fixtureC, storedAs: 'application/vnd.sqlite3' },
];

describe('each upload route takes every content type a user would send for its format (issue 23)', { timeout: 120_000 }, () => {
  for (const c of CASES) {
    it(`${c.slug} accepts ${c.label}: 202, the bytes stored unchanged, normalised like any upload`, async () => {
      const { userId, token } = await uploader();
      const uploadId = `ct-${randomUUID()}`;
      const res = await postUpload(t, c.slug, token, uploadId, c.request());
      expectStatus(res, 202);
      const stored = typeof c.stored === 'function' ? c.stored() : c.stored;
      expect(res.json()).toEqual({ upload_id: uploadId, provider: c.slug, bytes: stored.length, status: 'accepted' });
      expect(await accepted(userId, c.slug, uploadId)).toMatchObject({ bytes: stored.length, content_type: c.storedAs });
      const cov = await waitForEtl(t, tenant.apiKey, userId);
      expect(cov.parked_jobs).toBe(0);
      expect(cov.days.reduce((n, d) => n + d.records, 0)).toBeGreaterThan(0);
    });
  }

  it('every device and import slug has a row in the content-type table, and the idempotency of Upload-Id holds across types (the same bytes under another type replay)', async () => {
    expect(Object.keys(UPLOAD_FORMATS).sort()).toEqual([...DEVICE_SLUGS, ...IMPORT_SLUGS].sort());
    const { token } = await uploader();
    expectStatus(await postUpload(t, 'device-c', token, 'same-bytes', { body: fixtureC(), contentType: 'application/vnd.sqlite3' }), 202);
    const again = await postUpload(t, 'device-c', token, 'same-bytes', { body: fixtureC(), contentType: CURL_DEFAULT });
    expectStatus(again, 202);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });
});

describe('bodies judged by their first bytes (issue 23: a generic type is only a way of sending bytes)', () => {
  it.each([
    ['device-a', CURL_DEFAULT, Buffer.from(FIXTURE_A_NDJSON), /gzip/],
    ['device-a', 'application/gzip', Buffer.from('not gzip'), /gzip/],
    ['device-b', 'text/plain', Buffer.from('hello, this is not JSON'), /Health Connect JSON/],
    ['device-b', CURL_DEFAULT, Buffer.from('records=1&x=2'), /Health Connect JSON/],
    ['device-b', 'application/gzip', Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]), /not valid gzip/],
    // A small body is inflated in one call, a larger one through streams (uploadFormats.ts): either way a cut or padded gzip is refused.
    ['device-a', 'application/gzip', gzipSync(FIXTURE_A_NDJSON.split('\n')[0]!).subarray(0, -4), /not valid gzip/],
    ['device-a', 'application/gzip', Buffer.concat([gzipSync(FIXTURE_A_NDJSON.split('\n')[0]!), Buffer.from('trailing bytes')]), /not valid gzip/],
    ['device-a', 'application/gzip', gzipSync(randomBytes(16 * 1024)).subarray(0, -4), /not valid gzip/],
    ['device-c', CURL_DEFAULT, Buffer.from('not a database'), /SQLite/],
    ['device-c', 'application/x-sqlite3', gzipSync('SQLite format 3\u0000'), /SQLite/],
    ['device-c', 'application/vnd.sqlite3', fixtureC().subarray(0, 4096), /truncated|unreadable|corrupt|malformed/i],
    ['apple-health', 'application/xml', Buffer.from('{"records":[]}'), /not a zip archive, gzip or an XML document/],
    ['apple-health', 'application/xml', Buffer.from('<?xml version="1.0"?><Workbook/>'), /root is <Workbook>/],
    ['apple-health', 'application/zip', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(200)]), /zip/],
    ['health-connect', 'application/zip', Buffer.from('SQLite format 3\u0000'), /Health Connect/],
    ['fitbit-takeout', 'application/gzip', gzipSync('x'), /Takeout|zip/],
    ['samsung-health', 'application/zip', Buffer.from('not a zip'), /Samsung|zip/],
    ['dexcom-clarity', 'text/csv', Buffer.from('date,steps\n2024-01-01,5\n'), /not the header row of a Dexcom Clarity CSV export/],
  ])('%s refuses a %s body that cannot be its format with 422, storing nothing (contracts §12)', async (slug, contentType, body, detail) => {
    const { userId, token } = await uploader();
    const problem = expectProblem(await postUpload(t, slug, token, `bad-${randomUUID()}`, { body, contentType }), 422);
    expect(problem.detail).toMatch(detail);
    expect(await t.ctx.readStore.count('etl_jobs', { user_id: userId })).toBe(0);
  });

  it('device-b refuses a Content-Encoding other than gzip with 415', async () => {
    const { token } = await uploader();
    const res = await postUpload(t, 'device-b', token, 'br-1', { body: fixtureB(), contentType: 'application/json', headers: { 'content-encoding': 'br' } });
    expect(expectProblem(res, 415).detail).toMatch(/Content-Encoding/);
  });
});

/** Which types each route takes, as the 415 detail must name them. */
const TAKES: Record<string, string[]> = {
  'device-a': ['multipart/form-data', 'application/gzip', 'application/x-gzip', 'application/octet-stream', CURL_DEFAULT],
  'device-b': ['application/json', 'text/plain', 'application/gzip', 'application/x-gzip', CURL_DEFAULT],
  'device-c': ['application/octet-stream', 'application/vnd.sqlite3', 'application/x-sqlite3', CURL_DEFAULT],
  'apple-health': ['application/zip', 'application/xml', 'application/gzip'],
  'samsung-health': ['application/zip', 'application/xml', 'application/gzip'],
  'dexcom-clarity': ['text/csv', 'application/csv', 'text/plain', 'application/octet-stream'],
};

describe('a 415 says which types the route takes and shows a curl line that works (issue 23; contracts §12)', { timeout: 120_000 }, () => {
  const refused: [string, UploadRequest][] = [
    ['device-a', { body: fixtureB(), contentType: 'application/json' }],
    ['device-a', { body: fixtureA(), contentType: 'text/plain' }],
    ['device-b', { body: fixtureB(), contentType: 'application/xml' }],
    ['device-b', multipart([{ name: 'file', contentType: 'application/json', data: fixtureB() }])],
    ['device-c', { body: fixtureC(), contentType: 'application/json' }],
    ['device-c', { body: fixtureC(), contentType: 'text/plain' }],
    ['apple-health', { body: fixtureC(), contentType: 'application/json' }],
    ['samsung-health', { body: fixtureC(), contentType: 'text/csv' }],
    ['dexcom-clarity', { body: fixtureC(), contentType: 'application/zip' }],
  ];

  it.each(refused)('%s answers 415 to a body of another type, naming every type it takes and a curl line', async (slug, req) => {
    const { userId, token } = await uploader();
    const problem = expectProblem(await postUpload(t, slug, token, `415-${randomUUID()}`, req), 415);
    for (const type of TAKES[slug]!) expect(problem.detail).toContain(type);
    expect(problem.detail).toContain(`not ${req.contentType.split(';')[0]}`);
    expect(problem.detail).toContain(`curl -s -X POST ${t.ctx.config.publicBaseUrl}/v1/ingest/${slug} -H "Authorization: Bearer $TOKEN"`);
    expect(await t.ctx.readStore.count('etl_jobs', { user_id: userId })).toBe(0);
  });

  it('answers 415 to a request without a Content-Type, and to a device-a file part of another type, with the same help', async () => {
    const { token } = await uploader();
    const none = await t.app.inject({ method: 'POST', url: '/v1/ingest/device-c', headers: { authorization: `Bearer ${token}`, 'upload-id': 'no-type' }, payload: fixtureC() });
    const p = expectProblem(none, 415);
    expect(p.detail).toContain('the request has no Content-Type');
    expect(p.detail).toContain('application/vnd.sqlite3');
    const part = expectProblem(await postUpload(t, 'device-a', token, 'part-type', multipart([{ name: 'file', contentType: 'text/plain', data: fixtureA() }])), 415);
    expect(part.detail).toContain('the device-a file part must be application/gzip, application/x-gzip or application/octet-stream');
    expect(part.detail).toContain("-F 'file=@export.ndjson.gz;type=application/gzip'");
  });

  it('answers 404 for an unknown slug whatever the type, not 415', async () => {
    const { token } = await uploader();
    expectProblem(await postUpload(t, 'device-z', token, 'z-1', { body: Buffer.from('x'), contentType: 'text/html' }), 404);
  });

  it('answers the 415 before reading the body: a client announcing 40 MiB and sending none gets its answer', async () => {
    const { token } = await uploader();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (answer += d));
    socket.write(`POST /v1/ingest/device-c HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nUpload-Id: never\r\nContent-Type: image/png\r\nContent-Length: ${40 * 1024 * 1024}\r\n\r\n`);
    for (let i = 0; i < 200 && !answer.includes('\r\n\r\n{'); i++) await new Promise((r) => setTimeout(r, 25));
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 415 /);
    expect(answer).toContain('device-c takes');
  });

  it('the curl line of each 415 works as shown: run by curl against the service with the fixture saved under the name it uses, it answers 202', async () => {
    const { userId, token } = await uploader();
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const dir = tempDir('wellstream-curl-');
    writeFileSync(join(dir, 'export.ndjson.gz'), fixtureA());
    writeFileSync(join(dir, 'upload.json'), fixtureB());
    writeFileSync(join(dir, 'Gadgetbridge.db'), fixtureC());
    for (const slug of ['device-a', 'device-b', 'device-c']) {
      const detail = expectProblem(await postUpload(t, slug, token, `415-${slug}`, { body: Buffer.from('x'), contentType: 'image/png' }), 415).detail;
      const line = detail.slice(detail.indexOf('For example: ') + 'For example: '.length).replaceAll(t.ctx.config.publicBaseUrl, origin);
      const out = await new Promise<string>((resolve, reject) =>
        execFile('bash', ['-c', line], { cwd: dir, env: { ...process.env, TOKEN: token }, timeout: 30_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
      );
      expect(JSON.parse(out), `${slug}: ${line}`).toMatchObject({ provider: slug, status: 'accepted' });
    }
    await waitForEtl(t, tenant.apiKey, userId);
  });
});
