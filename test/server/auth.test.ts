import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintUserToken } from '../../commands/users/mintUserToken.js';
import { newSecret, sha256Hex } from '../../src/shared/secrets.js';
import { runCli } from '../cli/cliProcess.js';
import { addUserRoute, USER_ROUTE } from '../support/fastifyProbe.js';
import { expectProblem, expectStatus, expectUnauthorized, tenantApp, type TenantHandle, type TestApp, type UserBody } from '../support/server.js';

vi.mock('fastify', async (importOriginal) => (await import('../support/fastifyProbe.js')).probedFastify(await importOriginal()));

let t: TestApp, tenant: TenantHandle, user: UserBody;

beforeAll(async () => {
  addUserRoute();
  ({ t, tenant, user } = await tenantApp('auth'));
});
afterAll(async () => {
  await t?.close();
});

/** One route of each credential kind. */
const TENANT_ROUTE = '/v1/users';
const ADMIN_ROUTE = '/v1/admin/tenants';

describe('missing or invalid secrets get 401 with WWW-Authenticate: Bearer (Authentication 5, Errors 2)', () => {
  it.each([
    ['a tenant route', TENANT_ROUTE],
    ['an admin route', ADMIN_ROUTE],
    ['a user route', USER_ROUTE],
  ])('answers 401 with WWW-Authenticate: Bearer for a missing secret on %s (Authentication 5)', async (_what, url) => {
    expectUnauthorized(await t.call('GET', url));
  });

  it.each([
    ['an empty header', ''],
    ['the scheme alone', 'Bearer'],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['a secret without prefix', 'Bearer abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG'],
    ['a truncated tenant key', 'Bearer svc_sk_abc'],
    ['a tenant key with a non-base62 character', `Bearer svc_sk_${'a'.repeat(42)}-`],
    ['a tenant key one character too long', `Bearer svc_sk_${'a'.repeat(44)}`],
    ['two secrets', `Bearer svc_sk_${'a'.repeat(43)} svc_sk_${'b'.repeat(43)}`],
  ])('answers 401 with WWW-Authenticate: Bearer for a malformed Authorization (%s) (Authentication 5)', async (_what, header) => {
    expectUnauthorized(await t.call('GET', TENANT_ROUTE, { headers: { authorization: header } }));
  });

  it('answers 401 for a malformed secret even when a valid one is hidden in it (Authentication 5)', async () => {
    expectUnauthorized(await t.call('GET', TENANT_ROUTE, { headers: { authorization: `Bearer x${tenant.apiKey}` } }));
    expectUnauthorized(await t.call('GET', TENANT_ROUTE, { headers: { authorization: `Bearer ${tenant.apiKey}x` } }));
  });

  it('answers 401 for a well-formed but unknown tenant key (Authentication 5)', async () => {
    expectUnauthorized(await t.call('GET', TENANT_ROUTE, { key: newSecret('tenantKey') }));
  });

  it('answers 401 for a well-formed but unknown user token (Authentication 5)', async () => {
    expectUnauthorized(await t.call('GET', USER_ROUTE, { key: newSecret('userToken') }));
  });

  it('answers 401 for a well-formed admin key that is not this instance’s (Authentication 5, 9)', async () => {
    expectUnauthorized(await t.call('GET', ADMIN_ROUTE, { key: newSecret('admin') }));
  });

  it('answers 401 for a tenant key revoked with DELETE api-keys (Authentication 5; contracts §2)', async () => {
    const issued = await t.call('POST', `/v1/admin/tenants/${tenant.id}/api-keys`, { key: t.adminKey });
    expectStatus(issued, 201);
    const { id, api_key } = issued.json() as { id: string; api_key: string };
    expectStatus(await t.call('GET', TENANT_ROUTE, { key: api_key }), 200);
    expectStatus(await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/api-keys/${id}`, { key: t.adminKey }), 204);
    expectUnauthorized(await t.call('GET', TENANT_ROUTE, { key: api_key }));
    // The tenant's other key is untouched.
    expectStatus(await t.call('GET', TENANT_ROUTE, { key: tenant.apiKey }), 200);
  });

  it('answers 401 on the very next request for a tenant key accepted just before and revoked by the CLI from its own process (Authentication 5; contracts §2; issue 27: kept credentials)', async () => {
    const issued = await t.call('POST', `/v1/admin/tenants/${tenant.id}/api-keys`, { key: t.adminKey });
    expectStatus(issued, 201);
    const { id, api_key } = issued.json() as { id: string; api_key: string };
    // Twice: the second is answered from the credentials kept under the read store's stamp.
    expectStatus(await t.call('GET', `/v1/users/${user.id}`, { key: api_key }), 200);
    expectStatus(await t.call('GET', `/v1/users/${user.id}`, { key: api_key }), 200);
    const revoked = await runCli(t.dataDir, 'keys', 'revoke', id);
    expect(revoked.code, revoked.stderr).toBe(0);
    expectUnauthorized(await t.call('GET', `/v1/users/${user.id}`, { key: api_key }));
    expectStatus(await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey }), 200);
  });

  it('answers 401 for an expired user token (Authentication 5, 6)', async () => {
    const token = newSecret('userToken');
    const minted = await mintUserToken(t.ctx.eventStore, {
      tenantId: tenant.id,
      userId: user.id,
      tokenId: randomUUID(),
      tokenHash: sha256Hex(token),
      scopes: ['read'],
      ttlSeconds: 3600,
      at: new Date(Date.now() - 3601_000).toISOString(),
      by: 'test',
    });
    await t.ctx.settle(minted.position);
    expectUnauthorized(await t.call('GET', USER_ROUTE, { key: token }));
  });

  it('accepts a user token until its expiry and refuses it from then on (Authentication 6)', async () => {
    const { token, expires_at } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['read'], ttl_seconds: 60 });
    expectStatus(await t.call('GET', USER_ROUTE, { key: token }), 200);
    const expiry = Date.parse(expires_at);
    const spy = vi.spyOn(Date, 'now');
    try {
      spy.mockReturnValue(expiry - 1);
      expectStatus(await t.call('GET', USER_ROUTE, { key: token }), 200);
      spy.mockReturnValue(expiry);
      expectUnauthorized(await t.call('GET', USER_ROUTE, { key: token }));
    } finally {
      spy.mockRestore();
    }
  });

  it('authenticates a valid user token as that user of that tenant (Authentication 3)', async () => {
    const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
    const res = await t.call('GET', USER_ROUTE, { key: token });
    expectStatus(res, 200);
    expect(res.json()).toMatchObject({ principal: { kind: 'user', tenantId: tenant.id, userId: user.id, scopes: ['upload'] } });
  });
});

describe('a valid secret of the wrong kind gets 403 (Authentication 5, Errors 2)', () => {
  it('answers 403 (not 401) for a user token on a tenant route (Authentication 5)', async () => {
    const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['read', 'upload', 'connect'] });
    const res = await t.call('GET', TENANT_ROUTE, { key: token });
    expectProblem(res, 403);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('answers 403 for a tenant key on a user route (Authentication 5)', async () => {
    expectProblem(await t.call('GET', USER_ROUTE, { key: tenant.apiKey }), 403);
  });

  it('answers 403 for a tenant key on an admin route (Authentication 9)', async () => {
    expectProblem(await t.call('GET', ADMIN_ROUTE, { key: tenant.apiKey }), 403);
    expectProblem(await t.call('POST', ADMIN_ROUTE, { key: tenant.apiKey, body: { name: 'sneaky' } }), 403);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/${user.id}`, { key: tenant.apiKey }), 403);
  });

  it('answers 403 for a user token on an admin route (Authentication 9)', async () => {
    const { token } = await t.mintToken(tenant.apiKey, user.id);
    expectProblem(await t.call('GET', ADMIN_ROUTE, { key: token }), 403);
  });

  it('answers 403 for the admin key on a tenant route: the admin uses /v1/admin/tenants/{tenant_id}/... (Instance admin routes)', async () => {
    expectProblem(await t.call('GET', TENANT_ROUTE, { key: t.adminKey }), 403);
    expectProblem(await t.call('GET', `/v1/users/${user.id}`, { key: t.adminKey }), 403);
  });

  it('does not create anything when a wrong-kind secret is refused (Authentication 5)', async () => {
    const { token } = await t.mintToken(tenant.apiKey, user.id);
    const before = (await t.call('GET', TENANT_ROUTE, { key: tenant.apiKey, query: { limit: '1000' } })).json() as { data: unknown[] };
    expectProblem(await t.call('POST', TENANT_ROUTE, { key: token, body: { external_ref: 'by-a-user-token' } }), 403);
    expectProblem(await t.call('POST', TENANT_ROUTE, { key: t.adminKey, body: { external_ref: 'by-the-admin' } }), 403);
    const after = (await t.call('GET', TENANT_ROUTE, { key: tenant.apiKey, query: { limit: '1000' } })).json() as { data: unknown[] };
    expect(after.data).toHaveLength(before.data.length);
  });
});

describe('secrets are stored only as SHA-256 hashes (Authentication 4)', () => {
  it('keeps no tenant key or user token in clear anywhere under DATA_DIR (Authentication 4)', async () => {
    const { token } = await t.mintToken(tenant.apiKey, user.id);
    const issued = (await t.call('POST', `/v1/admin/tenants/${tenant.id}/api-keys`, { key: t.adminKey })).json() as { api_key: string };
    await t.ctx.settle();
    const secrets = [tenant.apiKey, token, issued.api_key];
    for (const file of readdirSync(t.dataDir)) {
      const content = readFileSync(join(t.dataDir, file)).toString('latin1');
      for (const secret of secrets) expect(content.includes(secret), `${secret.slice(0, 7)}… found in ${file}`).toBe(false);
    }
    // The hashes are what is kept (the check above is not vacuous).
    const all = readdirSync(t.dataDir).map((f) => readFileSync(join(t.dataDir, f)).toString('latin1')).join('');
    expect(all.includes(sha256Hex(token))).toBe(true);
  });
});
