import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { addUserRoute, USER_ROUTE } from '../support/fastifyProbe.js';
import { expectProblem, expectStatus, holdDeletionJobs, tenantApp, type TenantHandle, type TestApp, type TokenBody, type UserBody } from '../support/server.js';

vi.mock('fastify', async (importOriginal) => (await import('../support/fastifyProbe.js')).probedFastify(await importOriginal()));

let t: TestApp, tenant: TenantHandle, user: UserBody;

beforeAll(async () => {
  addUserRoute();
  ({ t, tenant, user } = await tenantApp('tokens'));
});
afterAll(async () => {
  await t?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const mint = (body: unknown, userId = user.id, key = tenant.apiKey) => t.call('POST', `/v1/users/${userId}/tokens`, { key, body });

/** Mints and checks that expires_at is `seconds` from now (within the time the call took, plus a second). */
async function expectLifetime(body: Record<string, unknown>, seconds: number) {
  const before = Date.now();
  const res = await mint(body);
  const after = Date.now();
  expectStatus(res, 201);
  const expires = Date.parse((res.json() as TokenBody).expires_at);
  expect(expires).toBeGreaterThanOrEqual(before + seconds * 1000 - 1000);
  expect(expires).toBeLessThanOrEqual(after + seconds * 1000 + 1000);
}

describe('minting user tokens (Credentials and users: POST /v1/users/{id}/tokens)', () => {
  it('answers 201 with a svc_ut_ token of 43 base62 characters, expires_at and the scopes granted (Resources: User token; contracts §2)', async () => {
    const res = await mint({ scopes: ['upload', 'read'] });
    expectStatus(res, 201);
    const body = res.json() as TokenBody;
    expect(Object.keys(body).sort()).toEqual(['expires_at', 'scopes', 'token']);
    expect(body.token).toMatch(/^svc_ut_[0-9A-Za-z]{43}$/);
    expect([...body.scopes].sort()).toEqual(['read', 'upload']);
    expect(Number.isNaN(Date.parse(body.expires_at))).toBe(false);
  });

  it('mints a different token each time (Resources: User token)', async () => {
    const a = (await mint({ scopes: ['read'] })).json() as TokenBody;
    const b = (await mint({ scopes: ['read'] })).json() as TokenBody;
    expect(a.token).not.toBe(b.token);
  });

  it('answers with Cache-Control: no-store (Credentials and users)', async () => {
    const res = await mint({ scopes: ['read'] });
    expectStatus(res, 201);
    expect(String(res.headers['cache-control'])).toMatch(/\bno-store\b/);
  });

  it.each([
    ['absent', {}],
    ['empty', { scopes: [] }],
    ['not an array', { scopes: 'read' }],
    ['an unknown scope', { scopes: ['admin'] }],
    ['a known and an unknown scope', { scopes: ['read', 'write'] }],
  ])('answers 400 when scopes are %s (Credentials and users: at least 1 item of upload, read, connect)', async (_what, body) => {
    expectProblem(await mint(body), 400);
  });

  it('accepts each known scope on its own: upload, read, connect (Credentials and users; Authentication 3)', async () => {
    for (const scope of ['upload', 'read', 'connect']) {
      const res = await mint({ scopes: [scope] });
      expectStatus(res, 201);
      expect((res.json() as TokenBody).scopes).toEqual([scope]);
    }
  });

  it('gives a token 3600 s when ttl_seconds is absent (Credentials and users; Authentication 6)', async () => {
    await expectLifetime({ scopes: ['upload'] }, 3600);
  });

  it('gives a token 3600 s when ttl_seconds is 0 (Credentials and users: 0 or absent = 3600)', async () => {
    await expectLifetime({ scopes: ['upload'], ttl_seconds: 0 }, 3600);
  });

  it('honours a ttl_seconds within the limit (Credentials and users)', async () => {
    await expectLifetime({ scopes: ['upload'], ttl_seconds: 120 }, 120);
  });

  it('accepts ttl_seconds 86400 for any scopes (Authentication 6: at most 24 hours)', async () => {
    await expectLifetime({ scopes: ['upload', 'read', 'connect'], ttl_seconds: 86400 }, 86400);
  });

  it.each([
    ['upload', ['upload']],
    ['connect', ['connect']],
    ['read and upload', ['read', 'upload']],
  ])('answers 400 for ttl_seconds 86401 with scopes %s (Authentication 6; Limits: token lifetime)', async (_what, scopes) => {
    expectProblem(await mint({ scopes, ttl_seconds: 86401 }), 400);
  });

  it('lets a read-only token live beyond 24 hours, up to 2592000 s (Authentication 6; Limits: token lifetime)', async () => {
    await expectLifetime({ scopes: ['read'], ttl_seconds: 86401 }, 86401);
    await expectLifetime({ scopes: ['read'], ttl_seconds: 2592000 }, 2592000);
  });

  it('answers 400 for a read-only token of 2592001 s (Credentials and users: ttl_seconds 0..2592000)', async () => {
    expectProblem(await mint({ scopes: ['read'], ttl_seconds: 2592001 }), 400);
  });

  it.each([-1, 1.5, '3600'])('answers 400 for ttl_seconds %j (Credentials and users: integer 0..2592000)', async (ttl) => {
    expectProblem(await mint({ scopes: ['read'], ttl_seconds: ttl }), 400);
  });

  it('ignores Idempotency-Key: the same key mints a new token each time (Conventions 4)', async () => {
    const headers = { 'idempotency-key': 'mint-once' };
    const a = await t.call('POST', `/v1/users/${user.id}/tokens`, { key: tenant.apiKey, body: { scopes: ['read'] }, headers });
    const b = await t.call('POST', `/v1/users/${user.id}/tokens`, { key: tenant.apiKey, body: { scopes: ['read'] }, headers });
    expectStatus(a, 201);
    expectStatus(b, 201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect((a.json() as TokenBody).token).not.toBe((b.json() as TokenBody).token);
    // and a different body with that key is no 422 either
    expectStatus(await t.call('POST', `/v1/users/${user.id}/tokens`, { key: tenant.apiKey, body: { scopes: ['upload'] }, headers }), 201);
  });
});

describe('tokens only for an active user of the tenant (Credentials and users; Conventions 6)', () => {
  it('answers 404 for an unknown or malformed user id', async () => {
    expectProblem(await mint({ scopes: ['read'] }, randomUUID()), 404);
    expectProblem(await mint({ scopes: ['read'] }, 'not-a-uuid'), 404);
  });

  it("answers 404 for another tenant's user (Conventions 6)", async () => {
    const other = await t.createTenant('tokens-other');
    const theirs = await t.createUser(other.apiKey);
    expectProblem(await mint({ scopes: ['read'] }, theirs.id), 404);
  });

  it('answers 404 for a user being deleted (Credentials and users: only for an active user)', async () => {
    const g = holdDeletionJobs(t);
    try {
      const doomed = await t.createUser(tenant.apiKey);
      await t.deleteUser(tenant.apiKey, doomed.id);
      expectProblem(await mint({ scopes: ['read'] }, doomed.id), 404);
    } finally {
      g.open();
    }
  });

  it('answers 404 for a user whose deletion is done', async () => {
    const gone = await t.createUser(tenant.apiKey);
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, gone.id));
    expectProblem(await mint({ scopes: ['read'] }, gone.id), 404);
  });
});

describe('token lifetime against key revocation (Authentication 6)', () => {
  it('keeps a token working after the tenant key that minted it is revoked (Authentication 6)', async () => {
    const issued = await t.call('POST', `/v1/admin/tenants/${tenant.id}/api-keys`, { key: t.adminKey });
    expectStatus(issued, 201);
    const key = issued.json() as { id: string; api_key: string };
    const { token } = (await mint({ scopes: ['read'] }, user.id, key.api_key)).json() as TokenBody;
    expectStatus(await t.call('GET', USER_ROUTE, { key: token }), 200);
    expectStatus(await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/api-keys/${key.id}`, { key: t.adminKey }), 204);
    expectProblem(await t.call('GET', '/v1/users', { key: key.api_key }), 401);
    const still = await t.call('GET', USER_ROUTE, { key: token });
    expectStatus(still, 200);
    expect(still.json()).toMatchObject({ principal: { kind: 'user', userId: user.id } });
  });
});
