import { createHash } from 'node:crypto';
import { appendFileSync, readdirSync, statSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderDataHead } from '../../commands/deletions/providerData.js';
import { uploadState, uploadStream } from '../../commands/ingestion/upload.js';
import { loadState } from '../../commands/shared/commandHandler.js';
import { uploadLockName } from '../../src/processes/uploads/uploadLocks.js';
import { expectProblem, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { until } from '../support/until.js';
import { TUS, tusRequests } from './tusHelpers.js';

/**
 * Issue 34 §6, the tus races (contracts §13 and §18): two service instances share one DATA_DIR
 * (one store, one staging folder), as the several-processes deployment does. A PATCH holds its
 * upload's lock in the store while its body streams: a second PATCH or a DELETE, from either
 * instance, is 423 meanwhile; HEAD answers what is durably staged and never cuts anything off;
 * an upload terminated is never accepted. Slow PATCHes are real HTTP requests whose body is
 * written in two parts; every wait is for a condition under a generous limit.
 */
const MIB = 1024 * 1024;
/** The staged chunk's size on disk: 1 MiB sealed with its 12-byte IV and 16-byte tag (src/rawstore/uploadStaging.ts). */
const STRIDE = MIB + 28;
const ZIP_START = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const LIMIT_MS = 60_000;

let a: TestApp;
let b: TestApp;
let tenant: TenantHandle;
let base: string;

beforeAll(async () => {
  a = await startTestApp();
  // The second instance: its own context and server on the first one's DATA_DIR.
  b = await startTestApp({ DATA_DIR: a.dataDir, ADMIN_API_KEY: a.adminKey });
  await a.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(a.app.server.address() as AddressInfo).port}`;
  tenant = await a.createTenant('tus-locks');
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const onA = tusRequests(() => a);
const onB = tusRequests(() => b);

async function uploader() {
  const user = await a.createUser(tenant.apiKey);
  const { token } = await a.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
  return { userId: user.id, token };
}

/** An upload's bytes that the fitbit-takeout judge takes for a zip (its first bytes are checked). */
function bodyOf(length: number, seed: number): Buffer {
  const body = Buffer.alloc(length);
  for (let i = 0; i < length; i++) body[i] = (i * 31 + seed) & 0xff;
  ZIP_START.copy(body);
  return body;
}

async function created(token: string, length: number, uploadId: string): Promise<string> {
  const res = await onA.create(token, length, { provider: 'fitbit-takeout', upload_id: uploadId });
  expect(res.statusCode).toBe(201);
  return res.headers.location as string;
}

/** The upload's state in the event store: accepted (with the digest of what was stored) or not. */
async function accepted(userId: string, uploadId: string) {
  const head = await loadProviderDataHead(a.ctx.eventStore, userId, 'fitbit-takeout');
  return (await loadState(a.ctx.eventStore, uploadStream(userId, 'fitbit-takeout', uploadId, head.generation), uploadState)).state.accepted;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

type SlowPatch = { req: ClientRequest; answer: Promise<{ status: number; offset: string | undefined }> };

/** A PATCH over real HTTP whose body is written now only in part; `finish` sends the rest. */
function slowPatch(token: string, location: string, offset: number, first: Buffer): SlowPatch {
  const req = httpRequest(`${base}${location}`, {
    method: 'PATCH',
    headers: { ...TUS, authorization: `Bearer ${token}`, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', 'transfer-encoding': 'chunked' },
  });
  const answer = new Promise<{ status: number; offset: string | undefined }>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, offset: res.headers['upload-offset'] as string | undefined }));
    });
    req.on('error', reject);
  });
  req.write(first);
  return { req, answer };
}

/** The upload's only staged folder (DATA_DIR/tus/<user>/<hash>). */
function stagedChunks(userId: string): string {
  const dirs = readdirSync(join(a.dataDir, 'tus', userId));
  expect(dirs).toHaveLength(1);
  return join(a.dataDir, 'tus', userId, dirs[0]!, 'chunks');
}

const offsetOn = async (t: typeof onA, token: string, location: string) => {
  const h = await t.head(token, location);
  expect(h.statusCode).toBe(200);
  return Number(h.headers['upload-offset']);
};

describe('tus locks across instances sharing one DATA_DIR (issue 34 §6; contracts §13, §18)', { timeout: 120_000 }, () => {
  it('HEAD never repairs: a part of a chunk past the whole ones (a PATCH writing it) is left as it is, the durable offset is told, and the upload completes intact', async () => {
    const { userId, token } = await uploader();
    const body = bodyOf(3 * MIB, 1);
    const location = await created(token, body.length, 'torn');
    expect((await onA.patch(token, location, 0, body.subarray(0, 1.5 * MIB))).statusCode).toBe(204);
    const chunks = stagedChunks(userId);
    expect(statSync(chunks).size).toBe(STRIDE);
    // What a PATCH's chunk looks like half-written, seen from another request (or another instance).
    appendFileSync(chunks, Buffer.alloc(STRIDE / 2, 9));
    expect(await offsetOn(onA, token, location)).toBe(1.5 * MIB);
    expect(await offsetOn(onB, token, location)).toBe(1.5 * MIB);
    expect(statSync(chunks).size).toBe(STRIDE + STRIDE / 2);
    // The next PATCH, holding the lock, drops the torn part before it appends.
    const rest = await onB.patch(token, location, 1.5 * MIB, body.subarray(1.5 * MIB));
    expect(rest.statusCode).toBe(204);
    expect(rest.headers['upload-offset']).toBe(String(body.length));
    expect((await accepted(userId, 'torn'))?.sha256).toBe(sha256(body));
  });

  it('while a PATCH streams on one instance, a PATCH or DELETE on either is 423, HEAD reports no more than arrived; the PATCH then ends and the bytes are intact', async () => {
    const { userId, token } = await uploader();
    const body = bodyOf(2.5 * MIB, 2);
    const location = await created(token, body.length, 'slow');
    const cut = 1.25 * MIB;
    const slow = slowPatch(token, location, 0, body.subarray(0, cut));
    // The first whole chunk is on disk: the PATCH is mid-body and holds the lock.
    await until('the first chunk staged', Date.now() + LIMIT_MS, async () => (await offsetOn(onB, token, location)) >= MIB);
    for (const t of [onA, onB]) {
      expect(await offsetOn(t, token, location)).toBeLessThanOrEqual(cut);
      expectProblem(await t.patch(token, location, MIB, body.subarray(MIB, MIB + 10)), 423);
      expectProblem(await t.terminate(token, location), 423);
    }
    slow.req.end(body.subarray(cut));
    expect(await slow.answer).toEqual({ status: 204, offset: String(body.length) });
    expect((await accepted(userId, 'slow'))?.sha256).toBe(sha256(body));
    // Once complete it can no longer be terminated.
    expectProblem(await onB.terminate(token, location), 409);
  });

  it('an upload terminated is never accepted: a DELETE on one instance and the final PATCH on the other, sent together, never both succeed', async () => {
    const { userId, token } = await uploader();
    for (let round = 0; round < 8; round++) {
      const uploadId = `race-${round}`;
      const body = bodyOf(MIB + 100, round);
      const location = await created(token, body.length, uploadId);
      expect((await onA.patch(token, location, 0, body.subarray(0, MIB))).statusCode).toBe(204);
      // Sent in one order, then the other, each from either instance: either may take the lock first.
      const [patchOn, deleteOn] = round % 4 < 2 ? [onA, onB] : [onB, onA];
      const sendPatch = () => patchOn.patch(token, location, MIB, body.subarray(MIB));
      const sendDelete = () => deleteOn.terminate(token, location);
      const [patched, deleted] = round % 2 ? await Promise.all([sendPatch(), sendDelete()]) : await Promise.all([sendDelete(), sendPatch()]).then(([d, p]) => [p, d] as const);
      const upload = await accepted(userId, uploadId);
      if (deleted.statusCode === 204) {
        expect(upload).toBeNull();
        expect([410, 423]).toContain(patched.statusCode);
        expect((await onA.head(token, location)).statusCode).toBe(410);
      } else {
        expect(patched.statusCode).toBe(204);
        expect(upload?.sha256).toBe(sha256(body));
        expect([409, 423]).toContain(deleted.statusCode);
      }
    }
  });

  it('a PATCH whose lock was taken over (it stalled past its lease) stores nothing more and is not accepted: 409, and the new holder keeps the upload', async () => {
    const { userId, token } = await uploader();
    const body = bodyOf(2.5 * MIB, 4);
    const location = await created(token, body.length, 'stolen');
    const cut = 1.25 * MIB;
    const slow = slowPatch(token, location, 0, body.subarray(0, cut));
    await until('the first chunk staged', Date.now() + LIMIT_MS, async () => (await offsetOn(onB, token, location)) >= MIB);
    // What a stall past LEASE_MS amounts to: the lease expires and another holder takes it.
    const store = a.ctx.readStore.leases!();
    const head = await loadProviderDataHead(a.ctx.eventStore, userId, 'fitbit-takeout');
    const name = uploadLockName(uploadStream(userId, 'fitbit-takeout', 'stolen', head.generation));
    const held = await store.get(name);
    expect(held).not.toBeNull();
    await store.remove(held!);
    const thief = await store.acquire(name, 'another-holder', 60_000);
    expect(thief).not.toBeNull();
    slow.req.end(body.subarray(cut));
    expect((await slow.answer).status).toBe(409);
    expect(await accepted(userId, 'stolen')).toBeNull();
    // Nothing past the whole chunk it had written when the lock went: the tail was not swapped in.
    expect(await offsetOn(onA, token, location)).toBeLessThan(body.length);
    expectProblem(await onB.patch(token, location, MIB, body.subarray(MIB)), 423);
    await store.remove(thief!);
    const offset = await offsetOn(onB, token, location);
    const rest = await onB.patch(token, location, offset, body.subarray(offset));
    expect(rest.statusCode).toBe(204);
    expect((await accepted(userId, 'stolen'))?.sha256).toBe(sha256(body));
  });

  it('a resumed upload goes on from the other instance: part on one, the rest on the other', async () => {
    const { userId, token } = await uploader();
    const body = bodyOf(2 * MIB + 7, 3);
    const location = await created(token, body.length, 'resumed');
    const first = slowPatch(token, location, 0, body.subarray(0, MIB + 5));
    await until('the first chunk staged', Date.now() + LIMIT_MS, async () => (await offsetOn(onB, token, location)) >= MIB);
    // The connection drops mid-body: what arrived stays, and the lock goes with the request.
    first.req.destroy();
    await first.answer.catch(() => undefined);
    const rest = await until('the rest accepted by the other instance', Date.now() + LIMIT_MS, async () => {
      const offset = await offsetOn(onB, token, location);
      expect(offset).toBeGreaterThanOrEqual(MIB);
      const res = await onB.patch(token, location, offset, body.subarray(offset));
      // 423 while the dropped PATCH still ends, 409 if its tail landed after the HEAD.
      return res.statusCode === 204 ? res : undefined;
    });
    expect(rest.headers['upload-offset']).toBe(String(body.length));
    expect((await accepted(userId, 'resumed'))?.sha256).toBe(sha256(body));
  });

  it('Upload-Offset and Upload-Length are strict decimal integers: "", 0x10, 1e3, -1, +1, 01 and 2^53 are 400', async () => {
    const { token } = await uploader();
    const location = await created(token, 100, 'strict');
    const headers = { ...TUS, authorization: `Bearer ${token}`, 'content-type': 'application/offset+octet-stream' };
    for (const bad of ['', '0x10', '1e3', '-1', '+1', '01', '9007199254740992']) {
      expectProblem(await a.app.inject({ method: 'PATCH', url: location, headers: { ...headers, 'upload-offset': bad }, payload: ZIP_START }), 400);
      const create = await a.app.inject({ method: 'POST', url: '/v1/uploads/tus', headers: { ...TUS, authorization: `Bearer ${token}`, 'upload-length': bad, 'upload-metadata': `provider ${Buffer.from('fitbit-takeout').toString('base64')},upload_id ${Buffer.from('strict-2').toString('base64')}` } });
      expectProblem(create, 400);
    }
    // Nothing was written by the refused PATCHes.
    expect(await offsetOn(onA, token, location)).toBe(0);
    expect((await onA.patch(token, location, 0, ZIP_START)).headers['upload-offset']).toBe('4');
  });
});
