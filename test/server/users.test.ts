import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerUser } from '../../commands/users/registerUser.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { addUserRoute, USER_ROUTE } from '../support/fastifyProbe.js';
import {
  expectProblem,
  expectStatus,
  expectUnauthorized,
  holdDeletionJobs,
  startTestApp,
  type TenantHandle,
  type TestApp,
  type UserBody,
} from '../support/server.js';

vi.mock('fastify', async (importOriginal) => (await import('../support/fastifyProbe.js')).probedFastify(await importOriginal()));

let t: TestApp, tenant: TenantHandle, other: TenantHandle;

beforeAll(async () => {
  addUserRoute();
  t = await startTestApp();
  tenant = await t.createTenant('users-a');
  other = await t.createTenant('users-b');
});
afterAll(async () => {
  await t?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Page = { data: UserBody[]; next_cursor: string | null };

describe('creating users (Credentials and users: POST /v1/users)', () => {
  it('answers 201 with the User and a Location header pointing at it (Credentials and users; Resources: User)', async () => {
    const res = await t.call('POST', '/v1/users', { key: tenant.apiKey, body: { external_ref: 'create-1' } });
    expectStatus(res, 201);
    const user = res.json() as UserBody;
    expect(user).toEqual({ id: expect.stringMatching(UUID), external_ref: 'create-1', status: 'active', created_at: expect.stringMatching(RFC3339) });
    expect(res.headers.location).toBe(`/v1/users/${user.id}`);
    const got = await t.call('GET', String(res.headers.location), { key: tenant.apiKey });
    expectStatus(got, 200);
    expect(got.json()).toEqual(user);
  });

  it('takes external_ref as optional: absent gives null (Resources: User)', async () => {
    const a = await t.createUser(tenant.apiKey, {});
    const b = await t.createUser(tenant.apiKey, {});
    expect(a.external_ref).toBeNull();
    expect(b.external_ref).toBeNull();
    expect(a.id).not.toBe(b.id);
  });

  it('accepts external_ref of 1 and of 255 characters (Resources: User, external_ref 1 to 255)', async () => {
    expect((await t.createUser(tenant.apiKey, { external_ref: 'x' })).external_ref).toBe('x');
    const long = 'r'.repeat(255);
    expect((await t.createUser(tenant.apiKey, { external_ref: long })).external_ref).toBe(long);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'r'.repeat(256)],
  ])('answers 400 for an external_ref that is %s (Resources: User, external_ref 1 to 255)', async (_what, ref) => {
    expectProblem(await t.call('POST', '/v1/users', { key: tenant.apiKey, body: { external_ref: ref } }), 400);
  });

  it('answers 409 for a duplicate external_ref in the same tenant and creates nothing (Credentials and users; Errors 2)', async () => {
    await t.createUser(tenant.apiKey, { external_ref: 'dup-ref' });
    const before = await listAll(tenant.apiKey);
    expectProblem(await t.call('POST', '/v1/users', { key: tenant.apiKey, body: { external_ref: 'dup-ref' } }), 409);
    expect(await listAll(tenant.apiKey)).toHaveLength(before.length);
  });

  it('answers 409 to only one of two concurrent creations with the same external_ref (Resources: User, unique per tenant)', async () => {
    const results = await Promise.all(
      Array.from({ length: 4 }, () => t.call('POST', '/v1/users', { key: tenant.apiKey, body: { external_ref: 'race-ref' } })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
  });

  it('lets two tenants use the same external_ref (Resources: User, unique per tenant)', async () => {
    const a = await t.createUser(tenant.apiKey, { external_ref: 'shared-ref' });
    const b = await t.createUser(other.apiKey, { external_ref: 'shared-ref' });
    expect(a.id).not.toBe(b.id);
  });
});

describe('reading users (Credentials and users: GET /v1/users/{id}; Conventions 6)', () => {
  it("answers 404, never 403, for another tenant's user (Conventions 6)", async () => {
    const theirs = await t.createUser(other.apiKey);
    expectProblem(await t.call('GET', `/v1/users/${theirs.id}`, { key: tenant.apiKey }), 404);
    expectStatus(await t.call('GET', `/v1/users/${theirs.id}`, { key: other.apiKey }), 200);
  });

  it('answers with what another process just wrote, never a kept answer from before it (issue 27: GET answers kept under the read store stamp)', async () => {
    const user = await t.createUser(tenant.apiKey, { external_ref: 'kept-answer' });
    for (let i = 0; i < 2; i++) expect((await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey })).json()).toMatchObject({ status: 'active' });
    // Another connection to the same file, as a projector in another thread or process writes.
    const elsewhere = new SqliteReadStore({ path: join(t.dataDir, 'readmodels.sqlite') });
    await elsewhere.applyChanges([{ op: 'update', collection: 'users', id: user.id, set: { external_ref: 'changed-elsewhere' } }]);
    await elsewhere.close();
    expect((await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey })).json()).toMatchObject({ external_ref: 'changed-elsewhere' });
    // The other tenant's key still finds nothing, kept answers or not.
    expectProblem(await t.call('GET', `/v1/users/${user.id}`, { key: other.apiKey }), 404);
  });

  it('answers 404 for an unknown user id (Errors 2)', async () => {
    expectProblem(await t.call('GET', `/v1/users/${randomUUID()}`, { key: tenant.apiKey }), 404);
  });

  it.each(['not-a-uuid', '123', `${randomUUID()}x`])('answers 404 for a malformed user id %s (Errors 2)', async (id) => {
    expectProblem(await t.call('GET', `/v1/users/${id}`, { key: tenant.apiKey }), 404);
  });

  it("answers 404 to DELETE of another tenant's user and leaves that user alone (Conventions 6)", async () => {
    const theirs = await t.createUser(other.apiKey);
    expectProblem(await t.call('DELETE', `/v1/users/${theirs.id}`, { key: tenant.apiKey }), 404);
    const still = await t.call('GET', `/v1/users/${theirs.id}`, { key: other.apiKey });
    expectStatus(still, 200);
    expect(still.json()).toMatchObject({ status: 'active' });
  });

  it('answers 404 to DELETE of an unknown or malformed user id (Errors 2)', async () => {
    expectProblem(await t.call('DELETE', `/v1/users/${randomUUID()}`, { key: tenant.apiKey }), 404);
    expectProblem(await t.call('DELETE', '/v1/users/not-a-uuid', { key: tenant.apiKey }), 404);
  });
});

describe('listing users (Conventions 1; Limits: page size)', () => {
  let listTenant: TenantHandle;
  const created: UserBody[] = [];

  beforeAll(async () => {
    listTenant = await t.createTenant('users-list');
    for (let i = 0; i < 7; i++) {
      created.push(await t.createUser(listTenant.apiKey, { external_ref: `list-${i}` }));
      await sleep(3); // distinct created_at, so "oldest first" has one right answer
    }
  });

  it('answers {data, next_cursor} with next_cursor null on the last page (Conventions 1)', async () => {
    const res = await t.call('GET', '/v1/users', { key: listTenant.apiKey });
    expectStatus(res, 200);
    const page = res.json() as Page;
    expect(Object.keys(page).sort()).toEqual(['data', 'next_cursor']);
    expect(page.next_cursor).toBeNull();
    expect(page.data).toHaveLength(7);
  });

  it('lists oldest first (Conventions 1)', async () => {
    const page = (await t.call('GET', '/v1/users', { key: listTenant.apiKey })).json() as Page;
    expect(page.data.map((u) => u.id)).toEqual(created.map((u) => u.id));
  });

  it('visits each of 7 users exactly once, oldest first, when paging with limit=3 (Conventions 1)', async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const query: Record<string, string> = { limit: '3' };
      if (cursor) query.cursor = cursor;
      const res = await t.call('GET', '/v1/users', { key: listTenant.apiKey, query });
      expectStatus(res, 200);
      const page = res.json() as Page;
      sizes.push(page.data.length);
      seen.push(...page.data.map((u) => u.id));
      cursor = page.next_cursor;
      if (!cursor) break;
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(created.map((u) => u.id));
  });

  it("lists only the caller tenant's users (Conventions 6)", async () => {
    await t.createUser(other.apiKey, { external_ref: 'not-in-list-tenant' });
    const page = (await t.call('GET', '/v1/users', { key: listTenant.apiKey })).json() as Page;
    expect(page.data.map((u) => u.id).sort()).toEqual(created.map((u) => u.id).sort());
  });

  it('accepts limit 1 and 1000 (Conventions 1; Limits: page size 1..1000)', async () => {
    const one = await t.call('GET', '/v1/users', { key: listTenant.apiKey, query: { limit: '1' } });
    expectStatus(one, 200);
    expect((one.json() as Page).data).toHaveLength(1);
    expect((one.json() as Page).next_cursor).not.toBeNull();
    expectStatus(await t.call('GET', '/v1/users', { key: listTenant.apiKey, query: { limit: '1000' } }), 200);
  });

  it.each(['0', '1001', 'abc', '-1', '2.5', ''])('answers 400 for limit=%s (Conventions 1; Errors 2; Limits: page size 1..1000)', async (limit) => {
    expectProblem(await t.call('GET', `/v1/users?limit=${limit}`, { key: listTenant.apiKey }), 400);
  });

  it('returns 100 items by default (Conventions 1: limit default 100)', async () => {
    const big = await t.createTenant('users-default-limit');
    let position = 0;
    const base = Date.now() - 200_000;
    for (let i = 0; i < 101; i++) {
      const r = await registerUser(t.ctx.eventStore, { tenantId: big.id, userId: randomUUID(), externalRef: null, at: new Date(base + i * 1000).toISOString() });
      position = r.position;
    }
    await t.ctx.settle(position);
    const first = (await t.call('GET', '/v1/users', { key: big.apiKey })).json() as Page;
    expect(first.data).toHaveLength(100);
    expect(first.next_cursor).not.toBeNull();
    const rest = (await t.call('GET', '/v1/users', { key: big.apiKey, query: { cursor: first.next_cursor! } })).json() as Page;
    expect(rest.data).toHaveLength(1);
    expect(rest.next_cursor).toBeNull();
  });

  async function firstCursor(): Promise<string> {
    const page = (await t.call('GET', '/v1/users', { key: listTenant.apiKey, query: { limit: '2' } })).json() as Page;
    expect(page.next_cursor).toEqual(expect.any(String));
    return page.next_cursor!;
  }

  it('accepts its own next_cursor (Conventions 1)', async () => {
    expectStatus(await t.call('GET', '/v1/users', { key: listTenant.apiKey, query: { cursor: await firstCursor() } }), 200);
  });

  it('answers 400 for a cursor with one character changed (Errors 2: invalid cursor)', async () => {
    const cursor = await firstCursor();
    for (const at of [0, Math.floor(cursor.length / 2), cursor.length - 1]) {
      const c = cursor[at] === 'A' ? 'B' : 'A';
      const tampered = cursor.slice(0, at) + c + cursor.slice(at + 1);
      expectProblem(await t.call('GET', '/v1/users', { key: listTenant.apiKey, query: { cursor: tampered } }), 400);
    }
  });

  it("answers 400 for another tenant's cursor (Errors 2: invalid cursor)", async () => {
    const cursor = await firstCursor();
    expectProblem(await t.call('GET', '/v1/users', { key: tenant.apiKey, query: { cursor } }), 400);
  });

  it("answers 400 for another list's cursor (Errors 2: invalid cursor)", async () => {
    await t.call('GET', '/v1/admin/tenants', { key: t.adminKey }); // make sure there is audit to page through
    const audit = (await t.call('GET', '/v1/audit-log', { key: listTenant.apiKey, query: { limit: '1' } })).json() as Page;
    expect(audit.next_cursor).toEqual(expect.any(String));
    expectProblem(await t.call('GET', '/v1/users', { key: listTenant.apiKey, query: { cursor: audit.next_cursor! } }), 400);
  });

  it.each(['garbage', 'a.b', 'a.b.c', '.', '%%%', Buffer.from('[1]').toString('base64url') + '.' + 'x'.repeat(32)])(
    'answers 400 for the made-up cursor %s (Errors 2: invalid cursor)',
    async (cursor) => {
      expectProblem(await t.call('GET', '/v1/users', { key: listTenant.apiKey, query: { cursor } }), 400);
    },
  );
});

describe('deleting users (States: User; Deletion job)', () => {
  it('answers 202 {job_id} and from then on GET of the user is 404 (States: User, active → deleting)', async () => {
    const user = await t.createUser(tenant.apiKey);
    const res = await t.call('DELETE', `/v1/users/${user.id}`, { key: tenant.apiKey });
    expectStatus(res, 202);
    expect(res.json()).toEqual({ job_id: expect.stringMatching(UUID) });
    expectProblem(await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey }), 404);
  });

  it('answers 404 for the user while the job is still pending (States: User, deleting: reads return 404)', async () => {
    const g = holdDeletionJobs(t);
    try {
      const user = await t.createUser(tenant.apiKey);
      const jobId = await t.deleteUser(tenant.apiKey, user.id);
      expectProblem(await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey }), 404);
      const job = (await t.call('GET', `/v1/deletions/${jobId}`, { key: tenant.apiKey })).json() as { status: string };
      expect(job.status).toBe('pending');
    } finally {
      g.open();
    }
  });

  it("stops the user's tokens at once: 401 on a user route right after DELETE (States: User; Authentication 6)", async () => {
    const g = holdDeletionJobs(t);
    try {
      const user = await t.createUser(tenant.apiKey);
      const read = await t.mintToken(tenant.apiKey, user.id, { scopes: ['read'] });
      const upload = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
      expectStatus(await t.call('GET', USER_ROUTE, { key: read.token }), 200);
      await t.deleteUser(tenant.apiKey, user.id);
      expectUnauthorized(await t.call('GET', USER_ROUTE, { key: read.token }));
      expectUnauthorized(await t.call('GET', USER_ROUTE, { key: upload.token }));
    } finally {
      g.open();
    }
  });

  it("keeps the user's tokens dead after the job is done (Authentication 6)", async () => {
    const user = await t.createUser(tenant.apiKey);
    const { token } = await t.mintToken(tenant.apiKey, user.id);
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, user.id));
    expectUnauthorized(await t.call('GET', USER_ROUTE, { key: token }));
  });

  it('leaves other users and their tokens alone (States: User)', async () => {
    const victim = await t.createUser(tenant.apiKey);
    const bystander = await t.createUser(tenant.apiKey);
    const { token } = await t.mintToken(tenant.apiKey, bystander.id);
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, victim.id));
    expectStatus(await t.call('GET', `/v1/users/${bystander.id}`, { key: tenant.apiKey }), 200);
    expectStatus(await t.call('GET', USER_ROUTE, { key: token }), 200);
  });

  it('serves the Deletion job and ends it `done` with finished_at set, readable after the user is gone (Deletion job)', async () => {
    const user = await t.createUser(tenant.apiKey);
    const before = Date.now();
    const jobId = await t.deleteUser(tenant.apiKey, user.id);
    const first = await t.call('GET', `/v1/deletions/${jobId}`, { key: tenant.apiKey });
    expectStatus(first, 200);
    expect(first.json()).toEqual({
      job_id: jobId,
      user_id: user.id,
      provider: null,
      status: expect.stringMatching(/^(pending|running|done)$/),
      created_at: expect.stringMatching(RFC3339),
      finished_at: (first.json() as { status: string }).status === 'done' ? expect.stringMatching(RFC3339) : null,
    });
    const done = await t.waitForDeletion(tenant.apiKey, jobId);
    expect(done).toMatchObject({ job_id: jobId, user_id: user.id, provider: null, status: 'done', finished_at: expect.stringMatching(RFC3339) });
    expect(Date.parse(done.finished_at as string)).toBeGreaterThanOrEqual(Date.parse(done.created_at as string));
    expect(Date.parse(done.created_at as string)).toBeGreaterThanOrEqual(before - 1000);
    // still readable later, the user being gone
    expectProblem(await t.call('GET', `/v1/users/${user.id}`, { key: tenant.apiKey }), 404);
    expectStatus(await t.call('GET', `/v1/deletions/${jobId}`, { key: tenant.apiKey }), 200);
  });

  it("answers 404 for another tenant's deletion job (Credentials and users: GET /v1/deletions/{job_id})", async () => {
    const user = await t.createUser(other.apiKey);
    const jobId = await t.deleteUser(other.apiKey, user.id);
    expectProblem(await t.call('GET', `/v1/deletions/${jobId}`, { key: tenant.apiKey }), 404);
    expectStatus(await t.call('GET', `/v1/deletions/${jobId}`, { key: other.apiKey }), 200);
  });

  it('answers 404 for an unknown or malformed job id (Errors 2)', async () => {
    expectProblem(await t.call('GET', `/v1/deletions/${randomUUID()}`, { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', '/v1/deletions/not-a-job', { key: tenant.apiKey }), 404);
  });

  it('answers a repeated DELETE while the user is being deleted with the same job_id (States: User; Deletion job)', async () => {
    const g = holdDeletionJobs(t);
    let jobId: string;
    try {
      const user = await t.createUser(tenant.apiKey);
      jobId = await t.deleteUser(tenant.apiKey, user.id);
      const again = await t.call('DELETE', `/v1/users/${user.id}`, { key: tenant.apiKey });
      expectStatus(again, 202);
      expect(again.json()).toEqual({ job_id: jobId });
    } finally {
      g.open();
    }
    expect((await t.waitForDeletion(tenant.apiKey, jobId)).status).toBe('done');
  });

  it('answers 404 to DELETE of a user whose deletion is done (States: User, deleting → removed)', async () => {
    const user = await t.createUser(tenant.apiKey);
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, user.id));
    expectProblem(await t.call('DELETE', `/v1/users/${user.id}`, { key: tenant.apiKey }), 404);
  });

  it('frees the external_ref once the user is deleted (Resources: User, unique per tenant)', async () => {
    const user = await t.createUser(tenant.apiKey, { external_ref: 'reusable-ref' });
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, user.id));
    const again = await t.createUser(tenant.apiKey, { external_ref: 'reusable-ref' });
    expect(again.id).not.toBe(user.id);
    expect(again.external_ref).toBe('reusable-ref');
  });

  it('no longer lists a deleted user (States: User, deleting → removed)', async () => {
    const user = await t.createUser(tenant.apiKey);
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, user.id));
    expect((await listAll(tenant.apiKey)).map((u) => u.id)).not.toContain(user.id);
  });
});

async function listAll(key: string): Promise<UserBody[]> {
  const out: UserBody[] = [];
  let cursor: string | null = null;
  do {
    const query: Record<string, string> = { limit: '1000' };
    if (cursor) query.cursor = cursor;
    const res = await t.call('GET', '/v1/users', { key, query });
    expectStatus(res, 200);
    const page = res.json() as Page;
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}
