import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixtureB, postUpload, requestFor } from '../ingest/uploadHelpers.js';
import { RawConnection } from '../support/rawHttp.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { eventually } from '../webhooks/receiver.js';

/**
 * contracts §18 (issue 34, finding 4): a request body that stalls for BODY_IDLE_TIMEOUT_S is
 * answered 408 and the connection closed, freeing its upload slot; a body that trickles in past
 * UPLOAD_BODY_DEADLINE_S is 408 too; an archive download whose reader stalls as long is closed
 * and frees its slot. The service runs with a half-second idle time; every wait below is a
 * safety bound, the old code never answers at all.
 */

// An archive too large for the sockets' buffers (random, so gzip cannot shrink it), read only as
// fast as it is taken: the reader that never reads leaves it waiting on a full socket.
const endless = vi.hoisted(() => ({ on: false }));
vi.mock('../../src/archive/userArchive.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/archive/userArchive.js')>();
  return {
    ...real,
    userArchive: (readStore: Parameters<typeof real.userArchive>[0], userId: string) =>
      endless.on
        ? (async function* () {
            for (;;) yield { kind: 'observation', noise: randomBytes(48 * 1024).toString('base64') };
          })()
        : real.userArchive(readStore, userId),
  };
});

let t: TestApp;
let tenant: TenantHandle;
let port: number;

beforeAll(async () => {
  t = await startTestApp({ BODY_IDLE_TIMEOUT_S: '0.5', UPLOAD_BODY_DEADLINE_S: '2', UPLOADS_IN_FLIGHT: '1', ARCHIVES_IN_FLIGHT: '1' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  tenant = await t.createTenant('stalled-transfers');
});
afterAll(async () => t?.close());

async function userToken(scopes: string[]): Promise<string> {
  const user = await t.createUser(tenant.apiKey);
  return (await t.mintToken(tenant.apiKey, user.id, { scopes })).token;
}

const uploadHead = (token: string, uploadId: string, length: number) =>
  `POST /v1/ingest/device-b HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nUpload-Id: ${uploadId}\r\nContent-Type: application/json\r\nContent-Length: ${length}`;

describe('stalled transfers (contracts §18: BODY_IDLE_TIMEOUT_S)', { timeout: 30_000 }, () => {
  it('contracts §18: an upload body that stops arriving is answered 408 (a problem) and its connection closed; its upload slot is free again', async () => {
    const token = await userToken(['upload']);
    const body = fixtureB();
    const c = await RawConnection.open(port);
    await c.begin(uploadHead(token, 'stalls-1', body.length), body.subarray(0, 16));
    const answer = await c.answer();
    expect(answer.status).toBe(408);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.headers.connection).toBe('close');
    expect((JSON.parse(answer.body) as { detail: string }).detail).toMatch(/no byte of the request body arrived for 0\.5 s/);
    await c.closedByServer();
    // UPLOADS_IN_FLIGHT is 1: the stalled body's slot came back.
    expectStatus(await postUpload(t, 'device-b', token, 'after-stall-1', requestFor('device-b', body)), 202);
  });

  it('contracts §18: a body that keeps trickling (never idle) is 408 once UPLOAD_BODY_DEADLINE_S passed, and its connection closed', async () => {
    const token = await userToken(['upload']);
    const c = await RawConnection.open(port);
    await c.begin(uploadHead(token, 'trickles-1', 1024 * 1024), '{');
    const answered = c.answer();
    let sent = 1;
    // A byte every 100 ms: a fifth of the idle time, so only the deadline can end it.
    const drip = setInterval(() => void c.more(' ').then(() => sent++, () => clearInterval(drip)), 100);
    try {
      const answer = await answered;
      expect(answer.status).toBe(408);
      expect((JSON.parse(answer.body) as { detail: string }).detail).toMatch(/did not arrive within 2 s/);
      expect(sent).toBeGreaterThan(5);
    } finally {
      clearInterval(drip);
    }
    await c.closedByServer();
  });

  it('contracts §18: an archive download whose reader stops reading is closed and frees its slot (the same user is served afterwards)', async () => {
    const token = await userToken(['read']);
    endless.on = true;
    const socket = connect(port, '127.0.0.1');
    let received = 0;
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => {
      received += d.length;
      // The reader takes the headers and the start of the archive, then stops reading for good.
      socket.pause();
    });
    socket.write(`GET /v1/me/archive HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    await eventually(async () => received > 0);
    // While the stalled archive holds its slot (one per user, one per instance), another is 429.
    expect((await t.app.inject({ method: 'GET', url: '/v1/me/archive', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(429);
    endless.on = false;
    await eventually(async () => (await t.app.inject({ method: 'GET', url: '/v1/me/archive', headers: { authorization: `Bearer ${token}` } })).statusCode === 200, 20_000);
    // The reader that comes back finds what was sent before the cut, then the end of the connection.
    socket.removeAllListeners('data');
    socket.resume();
    await eventually(async () => closed);
  });

  it('contracts §18: a body that arrives steadily is not cut, however slow its reader on the service side (uploads within the idle time are accepted)', async () => {
    const token = await userToken(['upload']);
    const body = fixtureB();
    const c = await RawConnection.open(port);
    const half = Math.floor(body.length / 2);
    await c.begin(uploadHead(token, 'steady-1', body.length), body.subarray(0, half));
    await c.more(body.subarray(half));
    expect((await c.answer()).status).toBe(202);
    c.close();
  });
});
