import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { probe } from '../support/fastifyProbe.js';
import { expectProblem, expectStatus, expectUnauthorized, startTestApp, type TenantHandle, type TestApp, type UserBody } from '../support/server.js';

vi.mock('fastify', async (importOriginal) => (await import('../support/fastifyProbe.js')).probedFastify(await importOriginal()));

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('admin-a');
  other = await t.createTenant('admin-b');
});
afterAll(async () => {
  await t?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const TENANT_KEY = /^svc_sk_[0-9A-Za-z]{43}$/;

let seq = 0;
/** An admin call with its own request id, to find it in the audit logs. */
async function adminCall(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
  const requestId = `admin-test-${++seq}-${Date.now()}`;
  const res = await t.call(method, url, { key: t.adminKey, body, headers: { 'x-request-id': requestId } });
  expect(res.headers['x-request-id']).toBe(requestId);
  return { res, requestId };
}

type AuditEntry = { id: string; at: string; actor: string; actor_id: string; action: string; method: string | null; path: string | null; status: number | null; tenant_id: string | null; request_id: string | null; target: string | null };

async function auditLog(url: string, key: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let cursor: string | null = null;
  do {
    const query: Record<string, string> = { limit: '1000' };
    if (cursor) query.cursor = cursor;
    const res = await t.call('GET', url, { key, query });
    expectStatus(res, 200);
    const page = res.json() as { data: AuditEntry[]; next_cursor: string | null };
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

describe('tenants and keys over the admin routes (contracts §2)', () => {
  it('creates a tenant: 201 {id, name, created_at, api_key svc_sk_…} and the key works at once (contracts §2)', async () => {
    const res = await t.call('POST', '/v1/admin/tenants', { key: t.adminKey, body: { name: 'fresh' } });
    expectStatus(res, 201);
    const body = res.json() as { id: string; name: string; created_at: string; api_key: string };
    expect(body).toEqual({ id: expect.stringMatching(UUID), name: 'fresh', created_at: expect.stringMatching(RFC3339), api_key: expect.stringMatching(TENANT_KEY) });
    const users = await t.call('GET', '/v1/users', { key: body.api_key });
    expectStatus(users, 200);
    expect(users.json()).toEqual({ data: [], next_cursor: null });
  });

  it('answers 400 for a tenant without a name (contracts §2)', async () => {
    expectProblem(await t.call('POST', '/v1/admin/tenants', { key: t.adminKey, body: {} }), 400);
    expectProblem(await t.call('POST', '/v1/admin/tenants', { key: t.adminKey, body: { name: '' } }), 400);
  });

  it('issues another key: 201 {id, api_key, created_at}; both keys work (contracts §2)', async () => {
    const res = await t.call('POST', `/v1/admin/tenants/${tenant.id}/api-keys`, { key: t.adminKey });
    expectStatus(res, 201);
    const body = res.json() as { id: string; api_key: string; created_at: string };
    expect(body).toEqual({ id: expect.stringMatching(UUID), api_key: expect.stringMatching(TENANT_KEY), created_at: expect.stringMatching(RFC3339) });
    expect(body.api_key).not.toBe(tenant.apiKey);
    const viaNew = await t.createUser(body.api_key);
    expectStatus(await t.call('GET', `/v1/users/${viaNew.id}`, { key: tenant.apiKey }), 200);
  });

  it('revokes a key: 204, then that key gets 401 and the tenant’s other keys still work (contracts §2; Authentication 5)', async () => {
    const { id, api_key } = (await t.call('POST', `/v1/admin/tenants/${tenant.id}/api-keys`, { key: t.adminKey })).json() as { id: string; api_key: string };
    const res = await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/api-keys/${id}`, { key: t.adminKey });
    expectStatus(res, 204);
    expect(res.body).toBe('');
    expectUnauthorized(await t.call('GET', '/v1/users', { key: api_key }));
    expectStatus(await t.call('GET', '/v1/users', { key: tenant.apiKey }), 200);
  });

  it("answers 404 to revoking another tenant's key through this tenant's path, and the key keeps working (contracts §2)", async () => {
    const theirs = (await t.call('POST', `/v1/admin/tenants/${other.id}/api-keys`, { key: t.adminKey })).json() as { id: string; api_key: string };
    expectProblem(await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/api-keys/${theirs.id}`, { key: t.adminKey }), 404);
    expectStatus(await t.call('GET', '/v1/users', { key: theirs.api_key }), 200);
  });

  it('answers 404 to revoking an unknown or malformed key id (contracts §2)', async () => {
    expectProblem(await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/api-keys/${randomUUID()}`, { key: t.adminKey }), 404);
    expectProblem(await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/api-keys/nope`, { key: t.adminKey }), 404);
  });
});

describe('{tenant_id} on admin routes (Instance admin routes: uuid; any other value is 404)', () => {
  const tenantRoutes = () => {
    const seen = new Set<string>();
    return probe.routes.filter((r) => r.url.includes(':tenant_id') && r.method !== 'HEAD' && !seen.has(`${r.method} ${r.url}`) && seen.add(`${r.method} ${r.url}`));
  };

  it('has admin routes under /v1/admin/tenants/{tenant_id} to check (the probe saw them)', () => {
    const routes = tenantRoutes().map((r) => `${r.method} ${r.url}`);
    expect(routes).toEqual(expect.arrayContaining(['GET /v1/admin/tenants/:tenant_id/users/:id', 'DELETE /v1/admin/tenants/:tenant_id/users/:id', 'POST /v1/admin/tenants/:tenant_id/api-keys']));
  });

  it.each([
    ['an unknown uuid', () => randomUUID()],
    ['a malformed id', () => 'not-a-tenant'],
    ['a uuid with a trailing character', () => `${tenant.id}0`],
  ])('answers 404 for %s on every admin route with {tenant_id} (Instance admin routes)', async (_what, tenantId) => {
    const failures: string[] = [];
    for (const route of tenantRoutes()) {
      const url = route.url.replace(':tenant_id', tenantId()).replace(/:[a-z_]+/g, () => randomUUID());
      const res = await t.call(route.method as 'GET', url, { key: t.adminKey, ...(route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH' ? { body: {} } : {}) });
      if (res.statusCode !== 404 || !String(res.headers['content-type']).startsWith('application/problem+json')) failures.push(`${route.method} ${url} → ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });
});

describe('admin mirrors of the user routes (Instance admin routes)', () => {
  it("answers GET user with the same User the tenant's own route gives (Instance admin routes: same answer)", async () => {
    const user = await t.createUser(tenant.apiKey, { external_ref: 'mirror-get' });
    const own = await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey });
    const viaAdmin = await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/${user.id}`, { key: t.adminKey });
    expectStatus(viaAdmin, 200);
    expect(viaAdmin.json()).toEqual(own.json());
  });

  it("answers 404 for another tenant's user, or a malformed or unknown user id, on the admin GET (Instance admin routes; Conventions 6)", async () => {
    const theirs = await t.createUser(other.apiKey);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/${theirs.id}`, { key: t.adminKey }), 404);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/not-a-uuid`, { key: t.adminKey }), 404);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/${randomUUID()}`, { key: t.adminKey }), 404);
  });

  it("answers 404 to the admin DELETE of another tenant's user and leaves the user alone (Instance admin routes; Conventions 6)", async () => {
    const theirs = await t.createUser(other.apiKey);
    expectProblem(await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/users/${theirs.id}`, { key: t.adminKey }), 404);
    expectStatus(await t.call('GET', `/v1/users/${theirs.id}`, { key: other.apiKey }), 200);
  });

  it('deletes a user: 202 {job_id}, Location at the admin route, then the user reads 404 and the job ends done (Instance admin routes)', async () => {
    const user = await t.createUser(tenant.apiKey);
    const res = await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/users/${user.id}`, { key: t.adminKey });
    expectStatus(res, 202);
    const { job_id } = res.json() as { job_id: string };
    expect(res.json()).toEqual({ job_id: expect.stringMatching(UUID) });
    expect(res.headers.location).toBe(`/v1/admin/tenants/${tenant.id}/users/${user.id}`);
    expectProblem(await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${tenant.id}/users/${user.id}`, { key: t.adminKey }), 404);
    expect(await t.waitForDeletion(tenant.apiKey, job_id)).toMatchObject({ user_id: user.id, status: 'done', finished_at: expect.stringMatching(RFC3339) });
  });

  it('answers Location headers pointing at the admin route on every mutating admin route (Instance admin routes)', async () => {
    const created = await t.call('POST', '/v1/admin/tenants', { key: t.adminKey, body: { name: 'loc' } });
    const id = (created.json() as { id: string }).id;
    expect(String(created.headers.location)).toMatch(new RegExp(`^/v1/admin/tenants/${id}(/|$)`));
    const issued = await t.call('POST', `/v1/admin/tenants/${id}/api-keys`, { key: t.adminKey });
    expect(String(issued.headers.location)).toMatch(new RegExp(`^/v1/admin/tenants/${id}/`));
    const keyId = (issued.json() as { id: string }).id;
    const revoked = await t.call('DELETE', `/v1/admin/tenants/${id}/api-keys/${keyId}`, { key: t.adminKey });
    expect(String(revoked.headers.location)).toMatch(new RegExp(`^/v1/admin/tenants/${id}/`));
    const user = await t.createUser((created.json() as { api_key: string }).api_key);
    const deleted = await t.call('DELETE', `/v1/admin/tenants/${id}/users/${user.id}`, { key: t.adminKey });
    expect(String(deleted.headers.location)).toMatch(new RegExp(`^/v1/admin/tenants/${id}/`));
  });
});

describe('audit of admin calls (Instance admin routes: recorded in the caller’s log and, with actor admin, in the tenant’s)', () => {
  let calls: { requestId: string; method: string; path: string; status: number }[];
  let user: UserBody;

  beforeAll(async () => {
    user = await t.createUser(tenant.apiKey);
    calls = [];
    const record = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => {
      const { res, requestId } = await adminCall(method, path, body);
      calls.push({ requestId, method, path, status: res.statusCode });
      return res;
    };
    expectStatus(await record('GET', `/v1/admin/tenants/${tenant.id}/users/${user.id}`), 200);
    expectStatus(await record('GET', `/v1/admin/tenants/${tenant.id}/users/${randomUUID()}`), 404);
    const issued = await record('POST', `/v1/admin/tenants/${tenant.id}/api-keys`);
    expectStatus(issued, 201);
    expectStatus(await record('DELETE', `/v1/admin/tenants/${tenant.id}/api-keys/${(issued.json() as { id: string }).id}`), 204);
    expectStatus(await record('DELETE', `/v1/admin/tenants/${tenant.id}/users/${user.id}`), 202);
  });

  it('records every admin call, reads and failures included, in the admin audit log (Instance admin routes)', async () => {
    const log = await auditLog('/v1/admin/audit-log', t.adminKey);
    for (const call of calls) {
      const entry = log.find((e) => e.request_id === call.requestId);
      expect(entry, `${call.method} ${call.path}`).toMatchObject({ actor: 'admin', method: call.method, path: call.path, status: call.status, tenant_id: tenant.id });
    }
  });

  it("records every admin call on a tenant in that tenant's own log with actor admin, readable with the tenant key (Instance admin routes)", async () => {
    const log = await auditLog('/v1/audit-log', tenant.apiKey);
    for (const call of calls) {
      const entry = log.find((e) => e.request_id === call.requestId);
      expect(entry, `${call.method} ${call.path}`).toMatchObject({ actor: 'admin', method: call.method, path: call.path, status: call.status });
    }
  });

  it("shows the admin the same tenant log at /v1/admin/tenants/{tenant_id}/audit-log (Instance admin routes)", async () => {
    const viaAdmin = await auditLog(`/v1/admin/tenants/${tenant.id}/audit-log`, t.adminKey);
    for (const call of calls) expect(viaAdmin.find((e) => e.request_id === call.requestId), `${call.method} ${call.path}`).toMatchObject({ actor: 'admin' });
  });

  it('records the creation of a tenant in the admin log and in the new tenant’s log (Instance admin routes)', async () => {
    const { res, requestId } = await adminCall('POST', '/v1/admin/tenants', { name: 'audited' });
    expectStatus(res, 201);
    const created = res.json() as { id: string; api_key: string };
    expect((await auditLog('/v1/admin/audit-log', t.adminKey)).find((e) => e.request_id === requestId)).toMatchObject({ actor: 'admin', status: 201 });
    expect((await auditLog('/v1/audit-log', created.api_key)).find((e) => e.request_id === requestId)).toMatchObject({ actor: 'admin', status: 201 });
  });

  it("keeps admin calls on one tenant out of another tenant's log (Instance admin routes)", async () => {
    const log = await auditLog('/v1/audit-log', other.apiKey);
    for (const call of calls) expect(log.find((e) => e.request_id === call.requestId)).toBeUndefined();
  });

  it('records an admin call refused for an unknown tenant in the admin log (Instance admin routes: every call)', async () => {
    const { res, requestId } = await adminCall('GET', `/v1/admin/tenants/${randomUUID()}/users/${randomUUID()}`);
    expectStatus(res, 404);
    expect((await auditLog('/v1/admin/audit-log', t.adminKey)).find((e) => e.request_id === requestId)).toMatchObject({ actor: 'admin', status: 404 });
  });

  it('records an admin call that names no tenant (the tenant list) in the admin log (Instance admin routes)', async () => {
    const { requestId } = await adminCall('GET', '/v1/admin/tenants');
    expect((await auditLog('/v1/admin/audit-log', t.adminKey)).find((e) => e.request_id === requestId)).toMatchObject({ actor: 'admin', method: 'GET', status: 200 });
  });
});
