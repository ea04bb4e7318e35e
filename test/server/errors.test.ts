import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectProblem, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('errors');
});
afterAll(async () => {
  await t?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('errors are RFC 9457 problem+json (Errors 1)', () => {
  it('answers a body that fails validation with a 400 problem naming the field (Errors 1)', async () => {
    const res = await t.call('POST', '/v1/users', { key: tenant.apiKey, body: { external_ref: 42 } });
    const body = expectProblem(res, 400);
    expect(body.title).toBe('Bad Request');
    expect(body.detail).toMatch(/external_ref/);
  });

  it('answers a query that fails validation with a 400 problem (Errors 1, Limits: page size)', async () => {
    const res = await t.call('GET', '/v1/users?limit=1001', { key: tenant.apiKey });
    expectProblem(res, 400);
  });

  it('answers malformed JSON with a 400 problem (Errors 1)', async () => {
    const res = await t.call('POST', '/v1/users', {
      key: tenant.apiKey,
      body: '{"external_ref": ',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(res, 400);
  });

  it('answers a body that is not JSON with a 4xx problem, not a bare fastify error (Errors 1, Conventions 1)', async () => {
    const res = await t.call('POST', '/v1/users', { key: tenant.apiKey, body: 'external_ref=x', headers: { 'content-type': 'text/plain' } });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expectProblem(res, res.statusCode);
  });

  it('answers a body above the size limit with a 413 problem (Errors 1)', async () => {
    const res = await t.call('POST', '/v1/users', {
      key: tenant.apiKey,
      body: JSON.stringify({ external_ref: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(res, 413);
  });

  it('answers an unknown route with a 404 problem (Errors 1)', async () => {
    const res = await t.call('GET', '/v1/no-such-route', { key: tenant.apiKey });
    expectProblem(res, 404);
  });

  it('answers an unknown route without credentials with a 404 problem, too (Errors 1)', async () => {
    const res = await t.call('GET', '/nothing/here');
    expectProblem(res, 404);
  });

  it('answers a known path with a method it does not take with a 404/405 problem (Errors 1)', async () => {
    const res = await t.call('PATCH', '/v1/users', { key: tenant.apiKey, body: {} });
    expect([404, 405]).toContain(res.statusCode);
    expectProblem(res, res.statusCode);
  });

  it('answers an HTTP method the server does not know at all with a 4xx problem (Errors 1)', async () => {
    const res = await t.call('PROPFIND' as 'GET', '/v1/users', { key: tenant.apiKey });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expectProblem(res, res.statusCode);
  });

  // fastify rejects an undecodable URL before routing, through frameworkErrors.
  it('answers a malformed URL encoding with a 400 problem (Errors 1)', async () => {
    const res = await t.call('GET', '/v1/users/%E0%A4%A', { key: tenant.apiKey });
    expectProblem(res, 400);
  });

  it('answers an unexpected failure with a bare 500 problem that leaks no internals (Errors 1)', async () => {
    const user = await t.createUser(tenant.apiKey);
    const realGet = t.ctx.readStore.get.bind(t.ctx.readStore);
    vi.spyOn(t.ctx.readStore, 'get').mockImplementation(async (collection: string, id: string) => {
      if (collection === 'users') throw new Error('SQLITE_CORRUPT: database disk image is malformed at /secret/path/readmodels.sqlite');
      return realGet(collection, id);
    });
    const res = await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey });
    const body = expectProblem(res, 500);
    expect(body.title).toBe('Internal Server Error');
    expect(res.body).not.toMatch(/SQLITE|secret|readmodels|malformed|stack|at /i);
  });

  it('answers an unexpected failure after the body was read whole with a 500 over a real connection, never with silence (Errors 1; issue 37\'s crash test found a request left unanswered)', async () => {
    // Node destroys a request's stream once its body ended: a failure after that must still be
    // answered, while the client waits on its open connection (light-my-request cannot show it).
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    // The user's own streams fail; the audit entry of the answer is written as usual.
    const store = t.ctx.eventStore;
    const [one, many] = [store.appendToStream.bind(store), store.appendToStreams.bind(store)];
    const failing = new Error('disk I/O error at /secret/path');
    vi.spyOn(store, 'appendToStream').mockImplementation((stream, ...rest) => (stream.startsWith('user') ? Promise.reject(failing) : one(stream, ...rest)));
    vi.spyOn(store, 'appendToStreams').mockImplementation((requests) => (requests.some((r) => r.streamName.startsWith('user')) ? Promise.reject(failing) : many(requests)));
    const res = await fetch(`${base}/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ external_ref: 'x'.repeat(64) }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(await res.text()).not.toMatch(/secret|disk/);
  });

  it('answers an audited call whose audit entry cannot be written with a bare 500 problem, never the store\'s message nor the unaudited answer (Errors 1; spec "Instance admin routes")', async () => {
    const store = t.ctx.eventStore;
    const one = store.appendToStream.bind(store);
    vi.spyOn(store, 'appendToStream').mockImplementation((stream, ...rest) => (stream.startsWith('audit-') ? Promise.reject(new Error('disk I/O error at /secret/path')) : one(stream, ...rest)));
    const res = await t.call('POST', '/v1/admin/tenants', { key: t.adminKey, body: { name: 'unaudited' } });
    const body = expectProblem(res, 500);
    expect(body.title).toBe('Internal Server Error');
    expect(res.body).not.toMatch(/secret|disk|api_key|unaudited/);
  });

  it('answers a response that would break its own schema with a 500 problem, not the invalid data (Errors 1)', async () => {
    const user = await t.createUser(tenant.apiKey);
    const realGet = t.ctx.readStore.get.bind(t.ctx.readStore);
    vi.spyOn(t.ctx.readStore, 'get').mockImplementation(async (collection: string, id: string) => {
      const doc = await realGet(collection, id);
      return collection === 'users' && doc ? ({ ...doc, status: 'weird-internal-status' } as typeof doc) : doc;
    });
    const res = await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey });
    expectProblem(res, 500);
    expect(res.body).not.toContain('weird-internal-status');
  });

  it('gives each problem a title matching its status (Errors 1)', async () => {
    const res404 = await t.call('GET', '/v1/users/00000000-0000-4000-8000-000000000000', { key: tenant.apiKey });
    expect(expectProblem(res404, 404).title).toBe('Not Found');
    const res401 = await t.call('GET', '/v1/users');
    expect(expectProblem(res401, 401).title).toBe('Unauthorized');
  });
});
