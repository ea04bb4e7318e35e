import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectProblem, expectStatus, gate, startTestApp, type Response, type TenantHandle, type TestApp, type UserBody } from '../support/server.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const create = (tenant: TenantHandle, key: string, body: unknown): Promise<Response> =>
  t.call('POST', '/v1/users', { key: tenant.apiKey, body, headers: { 'idempotency-key': key } });

async function userCount(tenant: TenantHandle): Promise<number> {
  const res = await t.call('GET', '/v1/users', { key: tenant.apiKey, query: { limit: '1000' } });
  expectStatus(res, 200);
  return (res.json() as { data: unknown[] }).data.length;
}

describe('Idempotency-Key on POST /v1/users (Conventions 4; Errors 3)', () => {
  it('replays the first answer with Idempotent-Replayed: true and creates no second user (Errors 3)', async () => {
    const tenant = await t.createTenant('idem-replay');
    const first = await create(tenant, 'key-1', { external_ref: 'idem-1' });
    expectStatus(first, 201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await create(tenant, 'key-1', { external_ref: 'idem-1' });
    expectStatus(again, 201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(again.headers.location).toBe(first.headers.location);
    expect(await userCount(tenant)).toBe(1);
  });

  it('replays without creating a user also when the body has no external_ref (Errors 3)', async () => {
    const tenant = await t.createTenant('idem-no-ref');
    const first = await create(tenant, 'key-2', {});
    const again = await create(tenant, 'key-2', {});
    expectStatus(again, 201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((again.json() as UserBody).id).toBe((first.json() as UserBody).id);
    expect(await userCount(tenant)).toBe(1);
  });

  it('answers 422 for the same key with a different body, creating nothing (Errors 2: 422)', async () => {
    const tenant = await t.createTenant('idem-422');
    expectStatus(await create(tenant, 'key-3', { external_ref: 'first' }), 201);
    expectProblem(await create(tenant, 'key-3', { external_ref: 'second' }), 422);
    expect(await userCount(tenant)).toBe(1);
  });

  it('treats the same key in another tenant as a different key (Conventions 4)', async () => {
    const a = await t.createTenant('idem-a');
    const b = await t.createTenant('idem-b');
    const fromA = await create(a, 'shared-key', {});
    const fromB = await create(b, 'shared-key', {});
    expectStatus(fromB, 201);
    expect(fromB.headers['idempotent-replayed']).toBeUndefined();
    expect((fromB.json() as UserBody).id).not.toBe((fromA.json() as UserBody).id);
    expect(await userCount(b)).toBe(1);
  });

  it('accepts keys of 1 and of 255 characters (Conventions 4; Limits: key 1..255)', async () => {
    const tenant = await t.createTenant('idem-lengths');
    for (const key of ['k', 'k'.repeat(255)]) {
      expectStatus(await create(tenant, key, {}), 201);
      expect((await create(tenant, key, {})).headers['idempotent-replayed']).toBe('true');
    }
  });

  it('answers 400 for a key longer than 255 characters and creates nothing (Conventions 4; Limits: key 1..255)', async () => {
    const tenant = await t.createTenant('idem-long');
    expectProblem(await create(tenant, 'k'.repeat(256), {}), 400);
    expect(await userCount(tenant)).toBe(0);
  });

  it('answers 400 for an empty key and creates nothing (Conventions 4; Limits: key 1..255)', async () => {
    const tenant = await t.createTenant('idem-empty');
    expectProblem(await create(tenant, '', {}), 400);
    expect(await userCount(tenant)).toBe(0);
  });

  it('answers 409 to a retry while the first request still runs, then replays once it is done (Errors 2: 409)', async () => {
    const tenant = await t.createTenant('idem-running');
    const g = gate();
    let held!: () => void;
    const reached = new Promise<void>((r) => (held = r));
    const store = t.ctx.eventStore;
    const real = store.appendToStream.bind(store);
    vi.spyOn(store, 'appendToStream').mockImplementation(async (stream, events, options) => {
      if (stream.startsWith('user-')) {
        held();
        await g.promise;
      }
      return real(stream, events, options);
    });
    const first = create(tenant, 'slow-key', {});
    await reached; // the first request holds the key and is inside its command
    try {
      const second = await create(tenant, 'slow-key', {});
      expectProblem(second, 409);
    } finally {
      g.open();
    }
    const done = await first;
    expectStatus(done, 201);
    const third = await create(tenant, 'slow-key', {});
    expect(third.headers['idempotent-replayed']).toBe('true');
    expect(third.json()).toEqual(done.json());
    expect(await userCount(tenant)).toBe(1);
  });

  it('lets exactly one of two simultaneous requests with one key run; the other gets 409 (Errors 2: 409)', async () => {
    const tenant = await t.createTenant('idem-race');
    const store = t.ctx.eventStore;
    const real = store.appendToStream.bind(store);
    vi.spyOn(store, 'appendToStream').mockImplementation(async (stream, events, options) => {
      if (stream.startsWith('user-')) await new Promise((r) => setTimeout(r, 200));
      return real(stream, events, options);
    });
    const results = await Promise.all([create(tenant, 'race-key', {}), create(tenant, 'race-key', {})]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(await userCount(tenant)).toBe(1);
  });

  it('forgets the stored answer when the user it created is deleted: the same request creates a new user (States: User)', async () => {
    const tenant = await t.createTenant('idem-deleted');
    const first = (await create(tenant, 'key-del', {})).json() as UserBody;
    await t.deleteUser(tenant.apiKey, first.id); // active → deleting; no need to wait for the job
    const again = await create(tenant, 'key-del', {});
    expectStatus(again, 201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect((again.json() as UserBody).id).not.toBe(first.id);
    expectStatus(await t.call('GET', `/v1/users/${(again.json() as UserBody).id}`, { key: tenant.apiKey }), 200);
  });

  it('forgets the stored answer of a deleted user also for a request with an external_ref, once the ref is free (States: User)', async () => {
    const tenant = await t.createTenant('idem-deleted-ref');
    const first = (await create(tenant, 'key-del-ref', { external_ref: 'again' })).json() as UserBody;
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, first.id));
    const again = await create(tenant, 'key-del-ref', { external_ref: 'again' });
    expectStatus(again, 201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect((again.json() as UserBody).id).not.toBe(first.id);
  });

  it('replays within 24 hours and runs the request afresh after (Limits: idempotency window 24 hours)', async () => {
    const tenant = await t.createTenant('idem-window');
    const first = (await create(tenant, 'key-window', {})).json() as UserBody;
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now');
    clock.mockReturnValue(now + 23 * 3600_000);
    const within = await create(tenant, 'key-window', {});
    expect(within.headers['idempotent-replayed']).toBe('true');
    expect((within.json() as UserBody).id).toBe(first.id);
    clock.mockReturnValue(now + 24 * 3600_000 + 60_000);
    const after = await create(tenant, 'key-window', {});
    clock.mockRestore();
    expectStatus(after, 201);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    expect((after.json() as UserBody).id).not.toBe(first.id);
  });

  it('does not apply Idempotency-Key semantics without the header: two requests make two users (Conventions 4)', async () => {
    const tenant = await t.createTenant('idem-none');
    await t.createUser(tenant.apiKey, {});
    await t.createUser(tenant.apiKey, {});
    expect(await userCount(tenant)).toBe(2);
  });
});
