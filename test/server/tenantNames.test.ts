import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../commands/tenants/createTenant.js';
import { tenantStream } from '../../commands/tenants/tenant.js';
import { decideClaimTenantName, ORPHANED_NAME_CLAIM_MS, tenantNameKey, tenantNameStream } from '../../commands/tenants/tenantName.js';
import { DomainError } from '../../commands/shared/domainError.js';
import { loadState } from '../../commands/shared/commandHandler.js';
import { tenantNameState } from '../../commands/tenants/tenantName.js';
import { newSecret, sha256Hex } from '../../src/shared/secrets.js';
import { eventually } from '../webhooks/receiver.js';
import { expectProblem, expectStatus, startTestApp, type TestApp } from '../support/server.js';

/**
 * Issue 23: duplicate tenant names answer 409, enforced by a claim stream per name (as
 * external_ref is), not by the tenants read model.
 */
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const post = (name: string) => t.call('POST', '/v1/admin/tenants', { key: t.adminKey, body: { name } });
const tenantCount = async () => ((await t.call('GET', '/v1/admin/tenants', { key: t.adminKey, query: { limit: '1000' } })).json() as { data: unknown[] }).data.length;

describe('tenant names are unique on the instance (issue 23)', () => {
  it('answers 409 problem+json to POST /v1/admin/tenants with a name in use, in any case or spacing, naming the tenant that has it; nothing is created', async () => {
    const first = await post('Acme Health');
    expectStatus(first, 201);
    const id = (first.json() as { id: string }).id;
    const count = await tenantCount();
    for (const name of ['Acme Health', 'acme health', '  ACME   health ', 'Acme\tHealth']) {
      const res = await post(name);
      const problem = expectProblem(res, 409);
      expect(problem.detail).toBe(`a tenant named "Acme Health" already exists (tenant ${id}); choose another name`);
    }
    expect(await tenantCount()).toBe(count);
    expectStatus(await post('Acme Health 2'), 201);
  });

  it('lets exactly one of several concurrent creations of one name through (the claim is the lock, not the read model)', async () => {
    const name = `race-${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(name)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });

  it('compares names as people read them: Unicode-normalised, trimmed, white space collapsed, case ignored', () => {
    expect(tenantNameKey('  Ａｃｍｅ\u00a0 Health ')).toBe('acme health');
    expect(tenantNameKey('Café')).toBe(tenantNameKey('Cafe\u0301'));
    expect(tenantNameKey('acme-health')).not.toBe(tenantNameKey('acme health'));
  });

  it('frees a claim whose tenant was never written once it is older than a minute (a crash between the two appends), and not before', () => {
    const at = '2026-11-26T10:00:00.000Z';
    const claim = { claimedBy: randomUUID(), claimedAt: at, name: 'x' };
    const cmd = (ms: number) => ({ tenantId: randomUUID(), name: 'x', at: new Date(Date.parse(at) + ms).toISOString() });
    expect(() => decideClaimTenantName(cmd(ORPHANED_NAME_CLAIM_MS - 1), claim, false)).toThrow(DomainError);
    expect(decideClaimTenantName(cmd(ORPHANED_NAME_CLAIM_MS + 1), claim, false)).toHaveLength(1);
    // A tenant that exists keeps its name however old the claim.
    expect(() => decideClaimTenantName(cmd(ORPHANED_NAME_CLAIM_MS * 1000), claim, true)).toThrow(/already exists/);
    // The same tenant claiming again (a retried command) is no conflict and writes nothing.
    expect(decideClaimTenantName({ tenantId: claim.claimedBy, name: 'x', at }, claim, true)).toEqual([]);
  });

  it('claims the names of tenants created before names were claimed, so an upgraded instance refuses them too', async () => {
    // A tenant as an earlier version wrote it: its events, no claim.
    const tenantId = randomUUID();
    const name = `legacy-${randomUUID()}`;
    const at = new Date().toISOString();
    await t.ctx.eventStore.appendToStream(
      tenantStream(tenantId),
      [
        { type: 'tenant.created', data: { tenant_id: tenantId, name, created_at: at, created_by: 'admin' } },
        { type: 'tenant.api_key_issued', data: { tenant_id: tenantId, key_id: randomUUID(), key_hash: sha256Hex(newSecret('tenantKey')), created_at: at, issued_by: 'admin' } },
      ],
      { expectedRevision: 'no_stream' },
    );
    const claim = await eventually(async () => {
      const { state } = await loadState(t.ctx.eventStore, tenantNameStream(name), tenantNameState);
      return state.claimedBy ?? undefined;
    });
    expect(claim).toBe(tenantId);
    expectProblem(await post(name.toUpperCase()), 409);
  });

  it('the command refuses a tenant id that exists before it could claim a second name', async () => {
    const res = await post(`first-name-${randomUUID()}`);
    const id = (res.json() as { id: string }).id;
    const second = `second-name-${randomUUID()}`;
    const input = { tenantId: id, name: second, keyId: randomUUID(), keyHash: sha256Hex(newSecret('tenantKey')), at: new Date().toISOString(), by: 'test' };
    await expect(createTenant(t.ctx.eventStore, input)).rejects.toThrow('tenant already exists');
    expect((await loadState(t.ctx.eventStore, tenantNameStream(second), tenantNameState)).revision).toBeNull();
  });
});
