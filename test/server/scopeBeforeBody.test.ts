import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authPlugin } from '../../src/server/auth.js';
import type { AppContext } from '../../src/server/appContext.js';
import { RawConnection, type RawAnswer } from '../support/rawHttp.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * contracts §18 (issue 34, finding 4): every route that takes a body checks the credential and
 * its scope before reading the body, 401/403 at once with the body never read. Driven over a real
 * socket that sends the headers of a 50 MiB upload and a few bytes and then nothing: an answer
 * that waited for the body would never come.
 */
const MiB = 1024 * 1024;
/** A safety bound only: the answer is due as soon as the headers are in, and never comes if the service waits for the body. */
const NO_ANSWER_MS = 10_000;

let t: TestApp;
let tenant: TenantHandle;
let port: number;
let userId: string;
const open: RawConnection[] = [];

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  tenant = await t.createTenant('scope-before-body');
  userId = (await t.createUser(tenant.apiKey)).id;
});
afterAll(async () => {
  for (const c of open) c.close();
  await t?.close();
});

const token = async (scopes: string[]) => (await t.mintToken(tenant.apiKey, userId, { scopes })).token;

/** Headers announcing `length` bytes and the first 64 of them; the answer, or a failure once NO_ANSWER_MS passed without one. */
async function stalledBody(head: string, length: number): Promise<RawAnswer> {
  const c = await RawConnection.open(port);
  open.push(c);
  await c.begin(`${head}\r\nHost: 127.0.0.1:${port}\r\nContent-Length: ${length}`, Buffer.alloc(64, 0x7b));
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${NO_ANSWER_MS} ms: the service waits for the body`)), NO_ANSWER_MS)));
  try {
    return await Promise.race([c.answer(), silence]);
  } finally {
    clearTimeout(timer);
  }
}

const problem = (a: RawAnswer) => JSON.parse(a.body) as { status: number; detail: string };

describe('credentials and scope before the body (contracts §18)', { timeout: 30_000 }, () => {
  it("contracts §18: a read token's 50 MiB upload to POST /v1/ingest/device-a is 403 at once, its body never sent", async () => {
    const read = await token(['read']);
    const answer = await stalledBody(`POST /v1/ingest/device-a HTTP/1.1\r\nAuthorization: Bearer ${read}\r\nUpload-Id: scope-1\r\nContent-Type: application/gzip`, 50 * MiB);
    expect(answer.status).toBe(403);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(problem(answer).detail).toMatch(/upload scope/);
  });

  it('contracts §18: an upload without a credential, or with an unknown one, is 401 at once', async () => {
    const none = await stalledBody('POST /v1/ingest/device-a HTTP/1.1\r\nUpload-Id: scope-2\r\nContent-Type: application/gzip', 50 * MiB);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const unknown = await stalledBody(`POST /v1/ingest/device-a HTTP/1.1\r\nAuthorization: Bearer svc_ut_${'x'.repeat(43)}\r\nUpload-Id: scope-3\r\nContent-Type: application/gzip`, 50 * MiB);
    expect(unknown.status).toBe(401);
  });

  it('contracts §18: a tenant API key on the upload route (a user-token route) is 403 at once', async () => {
    const answer = await stalledBody(`POST /v1/ingest/device-a HTTP/1.1\r\nAuthorization: Bearer ${tenant.apiKey}\r\nUpload-Id: scope-4\r\nContent-Type: application/gzip`, 50 * MiB);
    expect(answer.status).toBe(403);
    expect(problem(answer).detail).toMatch(/user token/);
  });

  it('contracts §18: a resumable upload (tus creation and PATCH) with a token lacking the upload scope is 403 at once', async () => {
    const read = await token(['read', 'connect']);
    const create = await stalledBody(`POST /v1/uploads/tus HTTP/1.1\r\nAuthorization: Bearer ${read}\r\nTus-Resumable: 1.0.0\r\nUpload-Length: ${50 * MiB}\r\nContent-Type: application/offset+octet-stream`, 50 * MiB);
    expect(create.status).toBe(403);
    const patch = await stalledBody(`PATCH /v1/uploads/tus/device-a/scope-5 HTTP/1.1\r\nAuthorization: Bearer ${read}\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream`, 50 * MiB);
    expect(patch.status).toBe(403);
    expect(problem(patch).detail).toMatch(/upload scope/);
  });

  it('contracts §18: the agent interface (POST /mcp) refuses a user token without the read scope, and the admin key, before its body', async () => {
    const upload = await token(['upload']);
    const head = (key: string) => `POST /mcp HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream`;
    const scoped = await stalledBody(head(upload), MiB - 1);
    expect(scoped.status).toBe(403);
    expect(problem(scoped).detail).toMatch(/read scope/);
    const admin = await stalledBody(head(t.adminKey), MiB - 1);
    expect(admin.status).toBe(403);
    expect(problem(admin).detail).toMatch(/tenant API key or a user token/);
  });

  it('contracts §18: push deliveries are refused from their headers before their body: an unknown webhook address or Authorization secret, a missing signature, a stale signature time (401)', async () => {
    const length = 200 * 1024;
    const json = 'Content-Type: application/json';
    for (const head of [
      `POST /webhooks/strava/not-an-address HTTP/1.1\r\n${json}`,
      `POST /webhooks/withings/not-an-address HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded`,
      `POST /webhooks/google HTTP/1.1\r\nAuthorization: not-a-subscriber\r\n${json}`,
      `POST /webhooks/fitbit HTTP/1.1\r\n${json}`,
      `POST /webhooks/oura HTTP/1.1\r\nx-oura-signature: 00\r\nx-oura-timestamp: 1000000000\r\n${json}`,
      `POST /webhooks/whoop HTTP/1.1\r\nx-whoop-signature: 00\r\n${json}`,
    ]) {
      const answer = await stalledBody(head, length);
      expect(answer.status, head).toBe(401);
      expect(answer.headers['content-type'], head).toMatch(/^application\/problem\+json/);
    }
  });

  it("contracts §18: the hosted connect page's POST with an unknown session is refused (404 page) before its body", async () => {
    const answer = await stalledBody(`POST /connect/cs_${'a'.repeat(43)}/oura HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded`, 200 * 1024);
    expect(answer.status).toBe(404);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
  });

  it('contracts §18: the service does not start with a user-token route that takes a body and names no scope', async () => {
    const app = Fastify();
    await app.register(authPlugin, { ctx: {} as AppContext });
    app.post('/unscoped', { config: { auth: 'user' } }, async () => ({}));
    await expect(app.ready()).rejects.toThrow(/POST \/unscoped/);
    await app.close().catch(() => undefined);
  });
});
