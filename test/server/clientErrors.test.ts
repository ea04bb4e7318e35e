import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

let t: TestApp;
let port: number;
let tenant: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('client-errors');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  await t?.close();
});

type Raw = { status: number; headers: Record<string, string>; body: string; reset: boolean };

/** Sends raw bytes on a fresh connection and reads until the server closes it. */
function raw(...chunks: (string | Buffer)[]): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    let reset = false;
    socket.on('data', (d) => got.push(d));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') reset = true;
      else reject(err);
    });
    socket.on('close', () => {
      const text = Buffer.concat(got).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body: rest.join('\r\n\r\n'), reset });
    });
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
    });
  });
}

function expectProblemAnswer(r: Raw, status: number) {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(r.body) as Record<string, unknown>;
  expect(body).toMatchObject({ type: 'about:blank', status, title: expect.any(String), detail: expect.any(String), request_id: expect.any(String) });
  expect(r.headers['x-request-id']).toBe(body.request_id);
}

describe('errors raised before routing are RFC 9457 problems (Errors 1; Conventions 3)', () => {
  it('an oversized header gets a 431 problem with a request id, not a reset', async () => {
    const r = await raw(`GET /v1/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.apiKey}\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
    expectProblemAnswer(r, 431);
    expect(r.reset).toBe(false);
  });

  it('an oversized URL (a 100 KB query) gets a 431 problem', async () => {
    const r = await raw(`GET /v1/users?cursor=${'b'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectProblemAnswer(r, 431);
    expect(r.reset).toBe(false);
  });

  it('a malformed request line gets a 400 problem', async () => {
    expectProblemAnswer(await raw('THIS IS NOT HTTP\r\n\r\n'), 400);
    expectProblemAnswer(await raw('GET /v1/users HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n'), 400);
  });

  it('a body over the limit, sent whole, gets its 413 problem', async () => {
    const body = Buffer.alloc(1024 * 1024 + 10, 'x');
    const r = await raw(
      `POST /v1/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      body,
    );
    expectProblemAnswer(r, 413);
  });
});
