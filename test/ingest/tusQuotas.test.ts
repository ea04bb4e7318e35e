import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tusRequests } from './tusHelpers.js';

/**
 * contracts §18 (issue 34 §3): resumable uploads cannot fill the disk every tenant's event log
 * lives on. At most TUS_OPEN_PER_USER incomplete uploads per user (429), at most
 * TUS_STAGED_BYTES_PER_TENANT declared bytes of a tenant's incomplete uploads (413), and no
 * creation while the free space under DATA_DIR is below DISK_FREE_FLOOR_BYTES (507); each refusal
 * is a problem with a `detail`. The defaults are used where the test can afford them (20 GiB
 * uploads are only declared: nothing of them is sent).
 */
const GIB = 1024 ** 3;
const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
});
async function app(env: Record<string, string> = {}) {
  const t = await startTestApp(env);
  apps.push(t);
  return t;
}
async function uploaderOf(t: TestApp, tenant: TenantHandle) {
  const user = await t.createUser(tenant.apiKey);
  return { userId: user.id, token: (await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] })).token };
}

describe('resumable upload quotas (contracts §18)', { timeout: 120_000 }, () => {
  let t: TestApp;
  let tenant: TenantHandle;
  beforeAll(async () => {
    // Room enough in the tenant for the user's count to be what refuses.
    t = await app({ TUS_STAGED_BYTES_PER_TENANT: String(1000 * GIB) });
    tenant = await t.createTenant('tus-quota-user');
  });
  const { create, terminate } = tusRequests(() => t);

  it('contracts §18: 30 creations of 20 GiB at once by one user: 5 are created (TUS_OPEN_PER_USER default), the other 25 are 429 with a detail, and the service still answers', async () => {
    const { userId, token } = await uploaderOf(t, tenant);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => create(token, 20 * GIB, { provider: 'apple-health', upload_id: `big-${i}` })));
    const statuses = answers.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25);
    const refused = expectProblem(answers.find((r) => r.statusCode === 429)!, 429);
    expect(refused.detail).toMatch(/TUS_OPEN_PER_USER 5/);
    // The service answers: the user's list holds the five, another user still creates.
    await t.ctx.settle(undefined, ['uploads']);
    const list = (await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey })).json() as { data: { status: string }[] };
    expect(list.data.filter((u) => u.status === 'receiving')).toHaveLength(5);
    const other = await uploaderOf(t, tenant);
    expect((await create(other.token, 20 * GIB, { provider: 'apple-health', upload_id: 'big-0' })).statusCode).toBe(201);
    // One created again under its name is answered, not refused; one terminated makes room.
    const ok = answers.findIndex((r) => r.statusCode === 201);
    const location = answers[ok]!.headers.location as string;
    expect((await create(token, 20 * GIB, { provider: 'apple-health', upload_id: `big-${ok}` })).statusCode).toBe(200);
    expectProblem(await create(token, 20 * GIB, { provider: 'apple-health', upload_id: 'one-more' }), 429);
    expect((await terminate(token, location)).statusCode).toBe(204);
    expect((await create(token, 20 * GIB, { provider: 'apple-health', upload_id: 'one-more' })).statusCode).toBe(201);
  });
});

describe('the tenant\'s staged bytes (contracts §18)', { timeout: 120_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await app();
  });
  const { create } = tusRequests(() => t);

  it('contracts §18: a creation that would take the declared bytes of a tenant\'s incomplete uploads past TUS_STAGED_BYTES_PER_TENANT (default 50 GiB) is 413 with a detail; another tenant is not affected', async () => {
    const tenant = await t.createTenant('tus-quota-tenant');
    const [u1, u2, u3] = [await uploaderOf(t, tenant), await uploaderOf(t, tenant), await uploaderOf(t, tenant)];
    expect((await create(u1.token, 20 * GIB, { provider: 'apple-health', upload_id: 'a' })).statusCode).toBe(201);
    expect((await create(u2.token, 20 * GIB, { provider: 'apple-health', upload_id: 'b' })).statusCode).toBe(201);
    const over = expectProblem(await create(u3.token, 10 * GIB + 1, { provider: 'apple-health', upload_id: 'c' }), 413);
    expect(over.detail).toMatch(/TUS_STAGED_BYTES_PER_TENANT/);
    // Exactly up to the limit is allowed; the tenant is then full.
    expect((await create(u3.token, 10 * GIB, { provider: 'apple-health', upload_id: 'c' })).statusCode).toBe(201);
    expectProblem(await create(u3.token, 1, { provider: 'apple-health', upload_id: 'd' }), 413);
    const elsewhere = await t.createTenant('tus-quota-elsewhere');
    expect((await create((await uploaderOf(t, elsewhere)).token, 20 * GIB, { provider: 'apple-health', upload_id: 'a' })).statusCode).toBe(201);
  });
});

describe('the free-space floor (contracts §18)', { timeout: 120_000 }, () => {
  it('contracts §18: no creation while the file system under DATA_DIR has less free space than DISK_FREE_FLOOR_BYTES: 507 with a detail', async () => {
    // A floor no disk reaches: whatever this machine has free is below it.
    const t = await app({ DISK_FREE_FLOOR_BYTES: String(Number.MAX_SAFE_INTEGER) });
    const tenant = await t.createTenant('tus-quota-disk');
    const { token } = await uploaderOf(t, tenant);
    const refused = expectProblem(await tusRequests(() => t).create(token, 1000, { provider: 'apple-health', upload_id: 'x' }), 507);
    expect(refused.detail).toMatch(/DISK_FREE_FLOOR_BYTES/);
  });
});
