import { StreamDeletedError } from '../../src/eventstore/eventStore.js';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { acceptUpload } from '../../commands/ingestion/acceptUpload.js';
import { INLINE_PAYLOAD_MAX_BYTES } from '../../src/rawstore/inlinePayload.js';
import { uploadStream } from '../../commands/ingestion/upload.js';
import { dataKeyId } from '../../src/crypto/dataKeys.js';
import { openBytes } from '../../src/crypto/payloadCipher.js';
import { DomainError } from '../../commands/shared/domainError.js';
import { sha256Hex } from '../../src/shared/secrets.js';
import { expectProblem, expectStatus, expectUnauthorized, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import {
  deviceAForm,
  fixtureA,
  fixtureB,
  fixtureBGzip,
  fixtureC,
  gzipOfZeros,
  listFiles,
  multipart,
  postUpload,
  requestFor,
  sleep,
  waitForEtl,
  type UploadRequest,
} from './uploadHelpers.js';

/**
 * contracts.md §3 "Device uploads", over HTTP: POST /v1/ingest/{device_slug} with a user token
 * holding scope `upload`; Upload-Id idempotency; the size limits and the cap on uploads in
 * flight; spec "States: User" and "Errors" for uploads by a user being deleted (401 / 410).
 */

const MiB = 1024 * 1024;

let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('ingest-uploads');
});
afterAll(async () => {
  await t?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A fresh user with an upload token (and the user id). */
async function uploader(scopes: string[] = ['upload']): Promise<{ userId: string; token: string }> {
  const user = await t.createUser(tenant.apiKey);
  const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes });
  return { userId: user.id, token };
}

const rawFiles = () => listFiles(join(t.dataDir, 'raw'));
/** Raw files holding these bytes (the raw store is content-addressed by SHA-256, whatever its layout). */
const rawFilesOf = (payload: Buffer) => {
  const sha = sha256Hex(payload);
  return rawFiles().filter((f) => f.endsWith(sha));
};
const etlJobsOf = (userId: string) => t.ctx.readStore.count('etl_jobs', { user_id: userId });
/**
 * The upload's events; a stream tombstoned by a user deletion running meanwhile (the route
 * registers the upload with the user's ledger before it is accepted) holds none either.
 */
const uploadEvents = (userId: string, slug: string, uploadId: string) =>
  t.ctx.eventStore.readStream(uploadStream(userId, slug, uploadId)).catch((err: unknown) => {
    if (err instanceof StreamDeletedError) return [];
    throw err;
  });

/** Nothing of a refused upload is kept: no upload stream, no raw file, no ETL job (contracts §3 "413 … and nothing kept"). */
async function expectNothingKept(userId: string, slug: string, uploadId: string, filesBefore: string[]) {
  expect(await uploadEvents(userId, slug, uploadId)).toEqual([]);
  expect(rawFiles()).toEqual(filesBefore);
  expect(await etlJobsOf(userId)).toBe(0);
}

describe('accepting an upload (contracts §3: 202 {upload_id, provider, bytes, status: "accepted"})', { timeout: 60_000 }, () => {
  const cases: { slug: string; label: string; payload: () => Buffer; gzipEncoded?: boolean }[] = [
    { slug: 'device-a', label: 'device-a multipart gzip NDJSON', payload: fixtureA },
    { slug: 'device-b', label: 'device-b application/json', payload: fixtureB },
    { slug: 'device-b', label: 'device-b application/json with Content-Encoding: gzip', payload: fixtureBGzip, gzipEncoded: true },
    { slug: 'device-c', label: 'device-c application/octet-stream Gadgetbridge export', payload: fixtureC },
  ];

  for (const c of cases) {
    it(`answers 202 for ${c.label}, after storing the raw upload unchanged and durably and queueing one ETL job (contracts §3)`, async () => {
      const { userId, token } = await uploader();
      const payload = c.payload();
      const uploadId = `acc-${randomUUID()}`;
      const res = await postUpload(t, c.slug, token, uploadId, requestFor(c.slug, payload, { gzipEncoded: c.gzipEncoded }));
      expectStatus(res, 202);
      expect(res.json()).toEqual({ upload_id: uploadId, provider: c.slug, bytes: payload.length, status: 'accepted' });
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      // Stored unchanged before the answer: the bytes as sent (the gzip part itself for device-a).
      const sha = sha256Hex(payload);
      const events = await uploadEvents(userId, c.slug, uploadId);
      expect(events[0]).toMatchObject({ type: 'upload.accepted', data: { upload_id: uploadId, user_id: userId, provider: c.slug, sha256: sha, bytes: payload.length } });
      const { object_key: key, inline_payload: inline } = events[0]!.data as { object_key: string; inline_payload?: string };
      // Stored sealed with the user's data key for the provider (docs/erasure.md), and opening to the bytes as sent:
      // a small body in its acceptance (issue 37, src/rawstore/inlinePayload.ts), a larger one in the raw store.
      const keyId = dataKeyId({ userId, provider: c.slug, generation: 0 });
      const dataKey = (await t.ctx.dataKeys.get(keyId))!;
      expect(inline !== undefined).toBe(payload.length <= INLINE_PAYLOAD_MAX_BYTES);
      const sealed = inline !== undefined ? Buffer.from(inline, 'base64') : await t.ctx.rawStore.get(key);
      expect(openBytes(dataKey, sealed, keyId).equals(payload)).toBe(true);
      const files = rawFilesOf(payload);
      if (inline !== undefined) expect(files).toEqual([]);
      else expect(files.some((f) => openBytes(dataKey, readFileSync(join(t.dataDir, 'raw', f)), keyId).equals(payload))).toBe(true);
      expect(await etlJobsOf(userId)).toBe(1);
      const cov = await waitForEtl(t, tenant.apiKey, userId);
      expect(cov.parked_jobs).toBe(0);
      expect(cov.days.reduce((n, d) => n + d.records, 0)).toBeGreaterThan(0);
    });
  }

  it('accepts an Upload-Id of 128 letters, digits, "-", "_" and "." (contracts §3: Upload-Id 1..128 of letters, digits, -, _, .)', async () => {
    const { token } = await uploader();
    const id = `Az09-_.${'x'.repeat(121)}`;
    expect(id).toHaveLength(128);
    const res = await postUpload(t, 'device-b', token, id, requestFor('device-b', fixtureB()));
    expectStatus(res, 202);
    expect(res.json()).toMatchObject({ upload_id: id });
    const one = await postUpload(t, 'device-b', token, '1', requestFor('device-b', fixtureB()));
    expectStatus(one, 202);
  });
});

describe('Upload-Id (contracts §3: required, 1..128 of letters, digits, -, _, .; idempotent per user and slug)', () => {
  it('refuses an upload without Upload-Id with 400, storing nothing (contracts §3: 400 without)', async () => {
    const { userId, token } = await uploader();
    const before = rawFiles();
    expectProblem(await postUpload(t, 'device-a', token, null, deviceAForm(fixtureA())), 400);
    expectProblem(await postUpload(t, 'device-b', token, null, requestFor('device-b', fixtureB())), 400);
    expect(rawFiles()).toEqual(before);
    expect(await etlJobsOf(userId)).toBe(0);
  });

  it.each([
    ['empty', ''],
    ['129 characters', 'a'.repeat(129)],
    ['a space', 'has space'],
    ['a slash', 'a/b'],
    ['a colon', 'a:b'],
    ['non-ASCII', 'café'],
  ])('refuses an Upload-Id with %s with 400 (contracts §3: 1..128 of letters, digits, -, _, .)', async (_label, id) => {
    const { userId, token } = await uploader();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/ingest/device-b',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'upload-id': id },
      payload: fixtureB(),
    });
    expectProblem(res, 400);
    expect(await etlJobsOf(userId)).toBe(0);
  });

  it('replays the first answer with Idempotent-Replayed: true for the same Upload-Id and body, storing nothing twice: one upload event, one ETL job, the same records (contracts §3)', async () => {
    const { userId, token } = await uploader();
    const gz = fixtureA();
    const first = await postUpload(t, 'device-a', token, 'same-1', deviceAForm(gz));
    expectStatus(first, 202);
    const before = await waitForEtl(t, tenant.apiKey, userId);
    const log = await t.ctx.eventStore.headPosition();

    // A new multipart envelope (another boundary) around the same file is the same upload.
    const again = await postUpload(t, 'device-a', token, 'same-1', deviceAForm(gz));
    expectStatus(again, 202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());

    const after = await waitForEtl(t, tenant.apiKey, userId);
    expect(await etlJobsOf(userId)).toBe(1);
    expect((await uploadEvents(userId, 'device-a', 'same-1')).filter((e) => e.type === 'upload.accepted')).toHaveLength(1);
    expect(await t.ctx.eventStore.headPosition()).toBe(log);
    expect(after.days).toEqual(before.days);
    expect(after.rejected_records).toBe(before.rejected_records);
  });

  it('replays a device-b upload the same way while its first ETL job may still be pending (contracts §3: same Upload-Id, same body)', async () => {
    const { userId, token } = await uploader();
    const req = requestFor('device-b', fixtureB());
    const first = await postUpload(t, 'device-b', token, 'same-b', req);
    expectStatus(first, 202);
    const again = await postUpload(t, 'device-b', token, 'same-b', req);
    expectStatus(again, 202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    await waitForEtl(t, tenant.apiKey, userId);
    expect(await etlJobsOf(userId)).toBe(1);
  });

  it('answers 422 for the same Upload-Id with a different body, keeping the first upload only (contracts §3)', async () => {
    const { userId, token } = await uploader();
    expectStatus(await postUpload(t, 'device-b', token, 'diff-1', requestFor('device-b', fixtureB())), 202);
    const other = Buffer.from(JSON.stringify({ records: [] }));
    const res = await postUpload(t, 'device-b', token, 'diff-1', requestFor('device-b', other));
    expectProblem(res, 422);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(rawFilesOf(other)).toEqual([]);
    expect((await uploadEvents(userId, 'device-b', 'diff-1')).filter((e) => e.type === 'upload.accepted')).toHaveLength(1);
    expect(await etlJobsOf(userId)).toBe(1);
    await waitForEtl(t, tenant.apiKey, userId);
  });

  it('keys idempotency by user and slug: the same Upload-Id for another user or another slug is a new upload (contracts §3: for the same user and slug)', async () => {
    const a = await uploader();
    const b = await uploader();
    expectStatus(await postUpload(t, 'device-b', a.token, 'shared-id', requestFor('device-b', fixtureB())), 202);
    const otherUser = await postUpload(t, 'device-b', b.token, 'shared-id', requestFor('device-b', fixtureB()));
    expectStatus(otherUser, 202);
    expect(otherUser.headers['idempotent-replayed']).toBeUndefined();
    const otherSlug = await postUpload(t, 'device-a', a.token, 'shared-id', deviceAForm(fixtureA()));
    expectStatus(otherSlug, 202);
    expect(otherSlug.headers['idempotent-replayed']).toBeUndefined();
    expect(await etlJobsOf(a.userId)).toBe(2);
    expect(await etlJobsOf(b.userId)).toBe(1);
    await waitForEtl(t, tenant.apiKey, a.userId);
    await waitForEtl(t, tenant.apiKey, b.userId);
  });
});

describe('credentials and slugs (contracts §3: user token with scope upload; spec Authentication 5, Errors)', () => {
  it('refuses a user token without the upload scope with 403 (contracts §3)', async () => {
    const { userId, token } = await uploader(['read']);
    expectProblem(await postUpload(t, 'device-a', token, 'no-scope', deviceAForm(fixtureA())), 403);
    const connect = await uploader(['connect', 'read']);
    expectProblem(await postUpload(t, 'device-b', connect.token, 'no-scope', requestFor('device-b', fixtureB())), 403);
    expect(await etlJobsOf(userId)).toBe(0);
  });

  it('refuses a tenant key (and the admin key) with 403: uploads take a user token (spec Authentication 5)', async () => {
    expectProblem(await postUpload(t, 'device-a', tenant.apiKey, 'tenant-key', deviceAForm(fixtureA())), 403);
    expectProblem(await postUpload(t, 'device-b', t.adminKey, 'admin-key', requestFor('device-b', fixtureB())), 403);
  });

  it('refuses a missing or unknown credential with 401 and WWW-Authenticate: Bearer (spec Authentication 5)', async () => {
    expectUnauthorized(await postUpload(t, 'device-b', null, 'anon', requestFor('device-b', fixtureB())));
    expectUnauthorized(await postUpload(t, 'device-b', `svc_ut_${'A'.repeat(43)}`, 'anon', requestFor('device-b', fixtureB())));
  });

  it('answers 404 for an unknown device slug (spec Uploads: three device routes exist)', async () => {
    const { token } = await uploader();
    expectProblem(await postUpload(t, 'device-z', token, 'slug-1', requestFor('device-b', fixtureB())), 404);
    expectProblem(await postUpload(t, 'DEVICE-A', token, 'slug-2', deviceAForm(fixtureA())), 404);
  });
});

describe('media types and the device-a form (contracts §3: device-a one part named file of type application/gzip; device-b application/json; device-c application/octet-stream; issue 23: every type a user would send, uploadContentTypes.test.ts)', () => {
  it('answers 415 for a body of a type its slug does not take (contracts §3, §12)', async () => {
    const { userId, token } = await uploader();
    const before = rawFiles();
    const cases: [string, UploadRequest][] = [
      ['device-a', { body: fixtureB(), contentType: 'application/json' }],
      ['device-b', { body: fixtureB(), contentType: 'application/octet-stream' }],
      ['device-b', deviceAForm(fixtureBGzip())],
      ['device-c', { body: fixtureC(), contentType: 'application/json' }],
      ['device-c', deviceAForm(fixtureC())],
    ];
    for (const [slug, req] of cases) {
      const res = await postUpload(t, slug, token, `mt-${randomUUID()}`, req);
      expect({ slug, type: req.contentType.split(';')[0], status: res.statusCode }).toEqual({ slug, type: req.contentType.split(';')[0], status: 415 });
      expectProblem(res, 415);
    }
    expect(rawFiles()).toEqual(before);
    expect(await etlJobsOf(userId)).toBe(0);
  });

  it('answers 415 for a device-a file part that is neither gzip nor octet-stream (contracts §3: a part of type application/gzip)', async () => {
    const { userId, token } = await uploader();
    for (const type of ['text/plain', 'application/json', 'application/zip']) {
      const res = await postUpload(t, 'device-a', token, `part-${randomUUID()}`, multipart([{ name: 'file', contentType: type, data: fixtureA() }]));
      expectProblem(res, 415);
    }
    expect(await etlJobsOf(userId)).toBe(0);
  });

  it('answers 400 for a device-a form with two parts (contracts §3: exactly one part)', async () => {
    const { userId, token } = await uploader();
    const before = rawFiles();
    const gz = fixtureA();
    const twoFiles = multipart([
      { name: 'file', data: gz },
      { name: 'file', data: gz },
    ]);
    expectProblem(await postUpload(t, 'device-a', token, 'two-1', twoFiles), 400);
    const fileAndField = multipart([
      { name: 'file', data: gz },
      { name: 'note', filename: null, contentType: null, data: 'hello' },
    ]);
    expectProblem(await postUpload(t, 'device-a', token, 'two-2', fileAndField), 400);
    expect(rawFiles()).toEqual(before);
    expect(await etlJobsOf(userId)).toBe(0);
  });

  it('answers 400 for a device-a part not named file, or a plain field named file (contracts §3: one part, named file)', async () => {
    const { userId, token } = await uploader();
    expectProblem(await postUpload(t, 'device-a', token, 'name-1', multipart([{ name: 'upload', data: fixtureA() }])), 400);
    expectProblem(await postUpload(t, 'device-a', token, 'name-2', multipart([{ name: 'file', filename: null, contentType: null, data: 'not a file' }])), 400);
    expectProblem(await postUpload(t, 'device-a', token, 'name-3', multipart([])), 400);
    expect(await etlJobsOf(userId)).toBe(0);
  });
});

// Inflating 512 MiB and moving 50 MiB bodies takes seconds, more on a shared machine.
describe('size limits (contracts §3: compressed body 50 MiB, decompressed 512 MiB; 413 above, and nothing kept)', { timeout: 180_000 }, () => {
  let bomb: Buffer;
  beforeAll(async () => {
    bomb = await gzipOfZeros(600);
    expect(bomb.length).toBeLessThan(50 * MiB);
  });

  it('answers 413 for a device-a gzip that inflates above 512 MiB, keeping nothing: no upload stream, no raw file, no ETL job (contracts §3)', async () => {
    const { userId, token } = await uploader();
    const before = rawFiles();
    const res = await postUpload(t, 'device-a', token, 'bomb-a', deviceAForm(bomb));
    expectProblem(res, 413);
    await expectNothingKept(userId, 'device-a', 'bomb-a', before);
    expect(rawFilesOf(bomb)).toEqual([]);
  });

  it('answers 413 for a device-b body with Content-Encoding: gzip that inflates above 512 MiB, keeping nothing (contracts §3)', async () => {
    const { userId, token } = await uploader();
    const before = rawFiles();
    const res = await postUpload(t, 'device-b', token, 'bomb-b', requestFor('device-b', bomb, { gzipEncoded: true }));
    expectProblem(res, 413);
    await expectNothingKept(userId, 'device-b', 'bomb-b', before);
  });

  it('answers 413 for a gzip bomb sent as a raw body, recognised by its first bytes: device-a application/gzip, device-b text/plain without Content-Encoding (contracts §3; issue 23)', async () => {
    const { userId, token } = await uploader();
    const before = rawFiles();
    expectProblem(await postUpload(t, 'device-a', token, 'bomb-raw-a', { body: bomb, contentType: 'application/gzip' }), 413);
    await expectNothingKept(userId, 'device-a', 'bomb-raw-a', before);
    expectProblem(await postUpload(t, 'device-b', token, 'bomb-raw-b', { body: bomb, contentType: 'text/plain' }), 413);
    await expectNothingKept(userId, 'device-b', 'bomb-raw-b', before);
  });

  it('answers 413 for a compressed body above 50 MiB on every slug, keeping nothing (contracts §3)', async () => {
    const { userId, token } = await uploader();
    const before = rawFiles();
    const big = Buffer.alloc(50 * MiB + 1, 0x20);
    // device-b: JSON of 50 MiB + 1 byte (whitespace around an empty record list).
    big.write('{"records":[]}', 0, 'latin1');
    expectProblem(await postUpload(t, 'device-b', token, 'big-b', { body: big, contentType: 'application/json' }), 413);
    await expectNothingKept(userId, 'device-b', 'big-b', before);
    // device-c: an "export" of 50 MiB + 1 byte starting with the SQLite header.
    const sqlite = Buffer.alloc(50 * MiB + 1);
    sqlite.write('SQLite format 3\u0000', 0, 'latin1');
    expectProblem(await postUpload(t, 'device-c', token, 'big-c', { body: sqlite, contentType: 'application/octet-stream' }), 413);
    await expectNothingKept(userId, 'device-c', 'big-c', before);
    // device-a: a file part of 50 MiB + 1 byte.
    const gzipLike = Buffer.alloc(50 * MiB + 1);
    expectProblem(await postUpload(t, 'device-a', token, 'big-a', deviceAForm(gzipLike)), 413);
    await expectNothingKept(userId, 'device-a', 'big-a', before);
  });

  it('accepts a body of exactly 50 MiB as far as the limits go (contracts §3: 413 only above)', async () => {
    const { token } = await uploader();
    const body = Buffer.alloc(50 * MiB, 0x20);
    body.write('{"records":[]}', 0, 'latin1');
    const res = await postUpload(t, 'device-b', token, 'exact-50', { body, contentType: 'application/json' });
    expectStatus(res, 202);
  });
});

describe('users being deleted (spec States: User; Errors 401 and 410)', () => {
  it("refuses an upload with a deleted user's token with 401: the user's tokens stop working (spec States: User)", async () => {
    const { userId, token } = await uploader();
    await t.deleteUser(tenant.apiKey, userId);
    const res = await postUpload(t, 'device-b', token, 'after-delete', requestFor('device-b', fixtureB()));
    expectUnauthorized(res);
    expect(await uploadEvents(userId, 'device-b', 'after-delete')).toEqual([]);
  });

  it("answers 410 when the user's deletion begins after the token was accepted and before the upload is, accepting nothing (spec States: User; Errors 410)", async () => {
    const { userId, token } = await uploader();
    const store = t.ctx.eventStore;
    const real = store.readStream.bind(store);
    const target = uploadStream(userId, 'device-b', 'racing');
    let deleted = false;
    // The route reads the upload's stream once the token is authenticated and the payload read:
    // the tenant deletes the user right then.
    vi.spyOn(store, 'readStream').mockImplementation(async (stream, options) => {
      if (stream === target && !deleted) {
        deleted = true;
        await t.deleteUser(tenant.apiKey, userId);
      }
      return real(stream, options);
    });
    const res = await postUpload(t, 'device-b', token, 'racing', requestFor('device-b', fixtureB()));
    expect(deleted).toBe(true);
    expectProblem(res, 410);
    vi.restoreAllMocks();
    expect(await uploadEvents(userId, 'device-b', 'racing')).toEqual([]);
    expect(await etlJobsOf(userId)).toBe(0);
  });

  // The raw payload is written before acceptUpload checks the user; when the deletion job has
  // already erased the user's namespace, the refused upload's file must not outlive it.
  it('a 410 upload leaves no raw file of the deleted user behind once the deletion job is done (spec Deletion job: done; States: User)', async () => {
    const { userId, token } = await uploader();
    const store = t.ctx.eventStore;
    const real = store.readStream.bind(store);
    const target = uploadStream(userId, 'device-b', 'late-body');
    let jobId: string | null = null;
    vi.spyOn(store, 'readStream').mockImplementation(async (stream, options) => {
      if (stream === target && jobId === null) {
        // The body of a slow upload arrives after the whole deletion ran.
        jobId = await t.deleteUser(tenant.apiKey, userId);
        expect(await t.waitForDeletion(tenant.apiKey, jobId)).toMatchObject({ status: 'done' });
      }
      return real(stream, options);
    });
    const payload = Buffer.from(JSON.stringify({ records: [], note: `late-${randomUUID()}` }));
    expectProblem(await postUpload(t, 'device-b', token, 'late-body', requestFor('device-b', payload)), 410);
    vi.restoreAllMocks();
    expect(await t.waitForDeletion(tenant.apiKey, jobId!)).toMatchObject({ status: 'done' });
    expect(rawFilesOf(payload)).toEqual([]);
    expect(rawFiles().filter((f) => f.includes(userId))).toEqual([]);
  });

  it("the acceptUpload command refuses a user being deleted with DomainError 'gone', which the error handler maps to 410 (spec Errors 410)", async () => {
    const { userId } = await uploader();
    const tokenId = randomUUID();
    const store = t.ctx.eventStore;
    // Hold the deletion job so the user stays `deleting` while the command runs.
    const real = store.appendToStream.bind(store);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    vi.spyOn(store, 'appendToStream').mockImplementation(async (stream, events, options) => {
      // The request writes the job's first event; the runner's claim of it waits.
      if (stream.startsWith('deletion-') && events.some((e) => e.type !== 'deletion.requested')) await held;
      return real(stream, events, options);
    });
    await t.deleteUser(tenant.apiKey, userId);
    const input = {
      tenantId: tenant.id,
      userId,
      tokenId,
      provider: 'device-b',
      uploadId: 'direct-1',
      objectKey: `sha256/${'0'.repeat(64)}`,
      sha256: '0'.repeat(64),
      bytes: 1,
      contentType: 'application/json',
      at: new Date().toISOString(),
    };
    const err = await acceptUpload(store, input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('gone');
    release();
    vi.restoreAllMocks();
    // Once erased the user is still gone for the command.
    const err2 = await acceptUpload(store, { ...input, uploadId: 'direct-2' }).catch((e: unknown) => e);
    expect((err2 as DomainError).code).toBe('gone');
    expect(await uploadEvents(userId, 'device-b', 'direct-1')).toEqual([]);
  });
});

describe('uploads in flight (contracts §3: at most UPLOADS_IN_FLIGHT per instance, above it 429 with Retry-After)', { timeout: 60_000 }, () => {
  let s: TestApp;
  let sTenant: TenantHandle;
  let token: string;
  let userId: string;
  let port: number;

  beforeAll(async () => {
    s = await startTestApp({ UPLOADS_IN_FLIGHT: '1' });
    sTenant = await s.createTenant('in-flight');
    userId = (await s.createUser(sTenant.apiKey)).id;
    token = (await s.mintToken(sTenant.apiKey, userId, { scopes: ['upload'] })).token;
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    port = (s.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await s?.close();
  });

  /** Sends the headers and the first bytes of an upload over a real socket, and holds the rest. */
  async function slowUpload(uploadId: string, form: UploadRequest) {
    // Watch the token lookup of this request: once it has answered, the in-flight hook runs next.
    const readStore = s.ctx.readStore;
    const realGet = readStore.get.bind(readStore);
    let authenticated!: () => void;
    const tokenLooked = new Promise<void>((r) => (authenticated = r));
    const spy = vi.spyOn(readStore, 'get').mockImplementation(async (collection, id) => {
      const doc = await realGet(collection, id);
      if (collection === 'user_tokens') authenticated();
      return doc as never;
    });
    const socket: Socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (answer += d));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      `POST /v1/ingest/device-a HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nUpload-Id: ${uploadId}\r\n` +
        `Content-Type: ${form.contentType}\r\nContent-Length: ${form.body.length}\r\nConnection: close\r\n\r\n`,
    );
    socket.write(form.body.subarray(0, 64));
    // Let the service authenticate it and count it in flight.
    await Promise.race([tokenLooked, sleep(10_000)]);
    spy.mockRestore();
    await sleep(50);
    return {
      answer: () => answer,
      finish: async () => {
        // Written, not ended: the service answers, then closes (Connection: close).
        socket.write(form.body.subarray(64));
        await ended;
        return answer;
      },
      abort: () => socket.destroy(),
    };
  }

  it('answers 429 with Retry-After to an upload above the cap, and accepts again once the upload in flight has ended (contracts §3)', async () => {
    const form = deviceAForm(fixtureA());
    const slow = await slowUpload('slow-1', form);
    expect(slow.answer()).toBe('');

    const res = await postUpload(s, 'device-b', token, 'while-busy', requestFor('device-b', fixtureB()));
    expectProblem(res, 429);
    expect(String(res.headers['retry-after'])).toMatch(/^[1-9]\d*$/);
    expect(await s.ctx.eventStore.readStream(uploadStream(userId, 'device-b', 'while-busy'))).toEqual([]);
    // Every device route shares the cap (spec Uploads: all three share a cap on uploads in flight).
    expectProblem(await postUpload(s, 'device-c', token, 'while-busy-c', requestFor('device-c', fixtureC())), 429);

    const answer = await slow.finish();
    expect(answer).toMatch(/^HTTP\/1\.1 202 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ upload_id: 'slow-1', provider: 'device-a', bytes: fixtureA().length, status: 'accepted' });

    expectStatus(await postUpload(s, 'device-b', token, 'after-busy', requestFor('device-b', fixtureB())), 202);
  });

  // fastify runs no onResponse for a request whose client disconnected: the slot must be freed
  // on the connection's close, or UPLOADS_IN_FLIGHT aborted uploads would block every upload.
  it('frees the slot of an upload whose client went away mid-body (contracts §3: uploads in flight)', async () => {
    const slow = await slowUpload('aborted-1', deviceAForm(fixtureA()));
    expectProblem(await postUpload(s, 'device-b', token, 'busy-2', requestFor('device-b', fixtureB())), 429);
    slow.abort();
    let status = 0;
    for (let i = 0; i < 100 && status !== 202; i++) {
      await sleep(50);
      status = (await postUpload(s, 'device-b', token, `after-abort-${i}`, requestFor('device-b', fixtureB()))).statusCode;
    }
    expect(status).toBe(202);
    expect(await s.ctx.eventStore.readStream(uploadStream(userId, 'device-a', 'aborted-1'))).toEqual([]);
  });
});
