import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawConnection, type RawAnswer } from '../support/rawHttp.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * Issue 20 ("Hostile input", 413 answered with the body drained for every oversized body):
 * fastify marked a body it refused for its size with `Connection: close`, and the socket closed
 * under a client still sending (EPIPE), so a client that writes its whole body before reading
 * (most do) never saw the 413. Here each request is written whole on a raw connection before the
 * answer is read: the answer must be a 413 problem, the write must not be reset, and the same
 * connection must answer the next request (the rest of the body was read and dropped).
 */
const MiB = 1024 * 1024;
const GARMIN_SECRET = 'oversized-bodies-garmin-secret-0123';

let t: TestApp;
let port: number;
let tenant: TenantHandle;
let userId: string;
let uploadToken: string;

beforeAll(async () => {
  t = await startTestApp({ GARMIN_INBOUND_SECRET: GARMIN_SECRET });
  tenant = await t.createTenant('oversized');
  userId = (await t.createUser(tenant.apiKey)).id;
  uploadToken = (await t.mintToken(tenant.apiKey, userId, { scopes: ['read', 'upload'] })).token;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  await t?.close();
});

function expectProblem(answer: RawAnswer, status: number): { detail: string } {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(answer.body) as { type: string; title: string; status: number; detail: string; request_id: string };
  expect(body).toMatchObject({ type: 'about:blank', status, title: expect.any(String), detail: expect.any(String) });
  expect(answer.headers['x-request-id']).toBe(body.request_id);
  return body;
}

/** The next request on the same connection is answered: the refused body was drained, not left in the way or cut. */
async function expectConnectionStillServes(conn: RawConnection) {
  const next = await conn.exchange(`GET /v1/users/${userId} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.apiKey}`);
  expect(next.status).toBe(200);
  expect(JSON.parse(next.body)).toMatchObject({ id: userId });
}

const json = (size: number) => Buffer.from(`{"padding":"${'x'.repeat(size - 15)}"}`);
const head = (method: string, path: string, headers: Record<string, string>) =>
  [`${method} ${path} HTTP/1.1`, 'Host: x', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');

describe('an oversized body is answered with a 413 problem and drained, never a reset (issue 20)', () => {
  const cases: { name: string; path: () => string; headers: () => Record<string, string>; size: number; limit: number }[] = [
    {
      name: 'JSON: a 12 MiB preview of source priorities (1 MiB routes)',
      path: () => `/v1/users/${userId}/source-priorities/preview`,
      headers: () => ({ authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' }),
      size: 12 * MiB,
      limit: MiB,
    },
    {
      name: 'JSON, admin: a 2 MiB tenant creation',
      path: () => '/v1/admin/tenants',
      headers: () => ({ authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json' }),
      size: 2 * MiB,
      limit: MiB,
    },
    {
      name: 'raw: a 1 MiB Oura webhook delivery (256 KiB)',
      path: () => '/webhooks/oura',
      // Signed headers (a recent time), so that the size is what refuses it: an unsigned one is 401 before its body (contracts §18).
      headers: () => ({ 'content-type': 'application/json', 'x-oura-signature': '00', 'x-oura-timestamp': String(Math.floor(Date.now() / 1000)) }),
      size: MiB,
      limit: 256 * 1024,
    },
    {
      name: 'raw, streamed: a 17 MiB Garmin notification to a known address (16 MiB)',
      path: () => `/inbound/garmin/${GARMIN_SECRET}`,
      headers: () => ({ 'content-type': 'application/json' }),
      size: 17 * MiB,
      limit: 16 * MiB,
    },
    {
      name: 'raw upload: a 51 MiB device-b body (50 MiB)',
      path: () => '/v1/ingest/device-b',
      headers: () => ({ authorization: `Bearer ${uploadToken}`, 'content-type': 'application/json', 'upload-id': 'oversized-1' }),
      size: 51 * MiB,
      limit: 50 * MiB,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: declared by Content-Length`, async () => {
      const conn = await RawConnection.open(port);
      try {
        const body = json(c.size);
        const answer = await conn.exchange(head('POST', c.path(), { ...c.headers(), 'content-length': String(body.length) }), body);
        expect(expectProblem(answer, 413).detail).toContain(String(c.limit));
        expect(answer.headers.connection).not.toBe('close');
        await expectConnectionStillServes(conn);
      } finally {
        conn.close();
      }
    }, 60_000);
  }

  for (const c of [cases[0]!, cases[3]!]) {
    it(`${c.name}: sent chunked (the limit is found while reading)`, async () => {
      const conn = await RawConnection.open(port);
      try {
        const answer = await conn.exchangeChunked(head('POST', c.path(), c.headers()), json(c.size));
        expectProblem(answer, 413);
        await expectConnectionStillServes(conn);
      } finally {
        conn.close();
      }
    }, 60_000);
  }

  it('a client that asked to close the connection still reads its 413 (the answer waits for the body)', async () => {
    const conn = await RawConnection.open(port);
    try {
      const body = json(12 * MiB);
      const answer = await conn.exchange(head('POST', `/v1/users/${userId}/source-priorities/preview`, { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json', 'content-length': String(body.length), connection: 'close' }), body);
      expectProblem(answer, 413);
    } finally {
      conn.close();
    }
  }, 60_000);

  it('a large body sent without credentials gets its 401 before anything is read, drained the same way', async () => {
    const conn = await RawConnection.open(port);
    try {
      const body = json(12 * MiB);
      const answer = await conn.exchange(head('POST', '/v1/users', { 'content-type': 'application/json', 'content-length': String(body.length) }), body);
      expectProblem(answer, 401);
      await expectConnectionStillServes(conn);
    } finally {
      conn.close();
    }
  }, 60_000);
});
