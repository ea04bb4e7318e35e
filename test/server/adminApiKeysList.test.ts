import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * GET /v1/admin/tenants/{tenant_id}/api-keys (contracts §2 issues and revokes keys; this lists them
 * so an operator can choose one to revoke): ids and dates only, oldest first, per tenant.
 */
let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('keys-a');
  other = await t.createTenant('keys-b');
});
afterAll(async () => {
  await t?.close();
});

type Key = { id: string; created_at: string; revoked_at: string | null };
const list = async (tenantId: string) => {
  const res = await t.call('GET', `/v1/admin/tenants/${tenantId}/api-keys`, { key: t.adminKey });
  expectStatus(res, 200);
  return (res.json() as { data: Key[] }).data;
};

describe('admin api key list', () => {
  it('lists the tenant’s keys oldest first with revoked_at, never a secret, and none of another tenant’s', async () => {
    const issued = (await t.call('POST', `/v1/admin/tenants/${tenant.id}/api-keys`, { key: t.adminKey })).json() as { id: string; api_key: string };
    expectStatus(await t.call('DELETE', `/v1/admin/tenants/${tenant.id}/api-keys/${issued.id}`, { key: t.adminKey }), 204);
    const keys = await list(tenant.id);
    expect(keys).toHaveLength(2);
    expect(keys[1]!.id).toBe(issued.id);
    expect(keys[0]!.revoked_at).toBeNull();
    expect(Number.isNaN(Date.parse(keys[1]!.revoked_at!))).toBe(false);
    expect(Object.keys(keys[0]!).sort()).toEqual(['created_at', 'id', 'revoked_at']);
    expect(JSON.stringify(keys)).not.toContain(issued.api_key);
    expect(JSON.stringify(keys)).not.toContain('svc_sk_');
    const theirs = await list(other.id);
    expect(theirs).toHaveLength(1);
    expect(theirs.some((k) => keys.some((m) => m.id === k.id))).toBe(false);
  });

  it('an unknown or malformed tenant is 404; a tenant key is 403; no key is 401', async () => {
    expectProblem(await t.call('GET', '/v1/admin/tenants/00000000-0000-4000-8000-000000000000/api-keys', { key: t.adminKey }), 404);
    expectProblem(await t.call('GET', '/v1/admin/tenants/nope/api-keys', { key: t.adminKey }), 404);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${tenant.id}/api-keys`, { key: tenant.apiKey }), 403);
    expectProblem(await t.call('GET', `/v1/admin/tenants/${tenant.id}/api-keys`), 401);
  });
});
