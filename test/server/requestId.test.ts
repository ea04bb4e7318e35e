import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('request-ids');
});
afterAll(async () => {
  await t?.close();
});

const VALID_ID = /^[A-Za-z0-9._-]{1,128}$/;

describe('X-Request-Id (Conventions 3, Limits: request id)', () => {
  it('puts X-Request-Id on a successful answer (Conventions 3)', async () => {
    const res = await t.call('GET', '/v1/users', { key: tenant.apiKey });
    expectStatus(res, 200);
    expect(String(res.headers['x-request-id'])).toMatch(VALID_ID);
  });

  it('puts X-Request-Id on a created answer (Conventions 3)', async () => {
    const res = await t.call('POST', '/v1/users', { key: tenant.apiKey, body: {} });
    expectStatus(res, 201);
    expect(String(res.headers['x-request-id'])).toMatch(VALID_ID);
  });

  it('puts X-Request-Id on the unauthenticated OpenAPI route (Conventions 3)', async () => {
    const res = await t.call('GET', '/openapi.yaml');
    expectStatus(res, 200);
    expect(String(res.headers['x-request-id'])).toMatch(VALID_ID);
  });

  it('puts X-Request-Id on 400, 401, 403 and 404 problems and repeats it as request_id (Conventions 3)', async () => {
    const cases = [
      { res: await t.call('GET', '/v1/users?limit=0', { key: tenant.apiKey }), status: 400 },
      { res: await t.call('GET', '/v1/users'), status: 401 },
      { res: await t.call('GET', '/v1/admin/tenants', { key: tenant.apiKey }), status: 403 },
      { res: await t.call('GET', '/v1/nope'), status: 404 },
    ];
    for (const { res, status } of cases) {
      const body = expectProblem(res, status);
      expect(body.request_id).toMatch(VALID_ID);
      expect(res.headers['x-request-id']).toBe(body.request_id);
    }
  });

  // fastify rejects an undecodable URL before routing, through frameworkErrors.
  it('puts X-Request-Id on the answer to a malformed URL (Conventions 3)', async () => {
    const res = await t.call('GET', '/v1/users/%E0%A4%A', { key: tenant.apiKey, headers: { 'x-request-id': 'bad-url-1' } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['x-request-id']).toBe('bad-url-1');
  });

  it('keeps a valid caller id on the response header and in the problem body (Conventions 3)', async () => {
    const id = 'Caller-id_1.2.3';
    const ok = await t.call('GET', '/v1/users', { key: tenant.apiKey, headers: { 'x-request-id': id } });
    expectStatus(ok, 200);
    expect(ok.headers['x-request-id']).toBe(id);
    const problem = await t.call('GET', '/v1/users', { headers: { 'x-request-id': id } });
    expect(expectProblem(problem, 401).request_id).toBe(id);
  });

  it('keeps a caller id of exactly 1 and exactly 128 characters (Limits: request id 1..128)', async () => {
    for (const id of ['x', 'a'.repeat(128)]) {
      const res = await t.call('GET', '/v1/nope', { headers: { 'x-request-id': id } });
      expect(res.headers['x-request-id']).toBe(id);
      expect(expectProblem(res, 404).request_id).toBe(id);
    }
  });

  it('replaces a caller id longer than 128 characters (Limits: request id 1..128)', async () => {
    const id = 'a'.repeat(129);
    const res = await t.call('GET', '/v1/nope', { headers: { 'x-request-id': id } });
    const body = expectProblem(res, 404);
    expect(body.request_id).not.toBe(id);
    expect(body.request_id).toMatch(VALID_ID);
  });

  it.each([
    ['a space', 'abc def'],
    ['a slash', 'abc/def'],
    ['a colon', 'abc:def'],
    ['a non-ASCII letter', 'abcä'],
    ['a backslash and an equals sign', 'abc\\level=fatal'],
  ])('replaces a caller id containing %s (Conventions 3: letters, digits, - _ . only)', async (_what, id) => {
    const res = await t.call('GET', '/v1/users', { key: tenant.apiKey, headers: { 'x-request-id': id } });
    expectStatus(res, 200);
    const got = String(res.headers['x-request-id']);
    expect(got).not.toBe(id);
    expect(got).toMatch(VALID_ID);
  });

  it('replaces an empty caller id (Limits: request id at least 1 character)', async () => {
    const res = await t.call('GET', '/v1/users', { key: tenant.apiKey, headers: { 'x-request-id': '' } });
    expectStatus(res, 200);
    expect(String(res.headers['x-request-id'])).toMatch(VALID_ID);
  });

  it('gives different requests without a caller id different ids (Conventions 3)', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add(String((await t.call('GET', '/v1/users', { key: tenant.apiKey })).headers['x-request-id']));
    expect(ids.size).toBe(5);
  });
});

describe('traceparent (Conventions 5)', () => {
  it('adds no trace headers to a response, with or without a traceparent (Conventions 5)', async () => {
    const traced = await t.call('GET', '/v1/users', { key: tenant.apiKey, headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    const plain = await t.call('GET', '/v1/users', { key: tenant.apiKey });
    for (const res of [traced, plain]) {
      expectStatus(res, 200);
      for (const h of ['traceparent', 'tracestate', 'traceresponse']) expect(res.headers[h]).toBeUndefined();
    }
  });
});
