import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { IDEMPOTENCY_COLLECTION, LEASE_MS, purgeExpiredKeys } from '../../src/server/idempotency.js';
import { expectProblem, expectStatus, gate, startTestApp, type Response, type TenantHandle, type TestApp, type UserBody } from '../support/server.js';

/**
 * Idempotency-Key on POST /v1/users (spec Conventions 4, Errors 3; issue: "idempotency that
 * cannot create two users"): the created user's id derives from the tenant, the key and its
 * reservation, so a retry after any failure lands on the same user; a reservation has a lease,
 * so a request that died holds its key no longer than that; expired keys are purged.
 */
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const create = (tenant: TenantHandle, key: string, body: unknown = {}): Promise<Response> =>
  t.call('POST', '/v1/users', { key: tenant.apiKey, body, headers: { 'idempotency-key': key } });

async function users(tenant: TenantHandle): Promise<UserBody[]> {
  const res = await t.call('GET', '/v1/users', { key: tenant.apiKey, query: { limit: '1000' } });
  expectStatus(res, 200);
  return (res.json() as { data: UserBody[] }).data;
}

describe('Idempotency-Key reservations (Conventions 4; Errors 3)', () => {
  it('a retry after a failure that came after the user was written answers that same user, never a second one', async () => {
    const tenant = await t.createTenant('idem-failure');
    vi.spyOn(t.ctx, 'settle').mockRejectedValueOnce(new Error('read models unavailable'));
    expectProblem(await create(tenant, 'after-append', { external_ref: 'once' }), 500);
    const written = await users(tenant);
    expect(written).toHaveLength(1);
    const retry = await create(tenant, 'after-append', { external_ref: 'once' });
    expectStatus(retry, 201);
    expect((retry.json() as UserBody).id).toBe(written[0]!.id);
    expect(await users(tenant)).toHaveLength(1);
    // And from now on the stored answer.
    expect((await create(tenant, 'after-append', { external_ref: 'once' })).headers['idempotent-replayed']).toBe('true');
  });

  it('holds a key while its request runs (409), frees it once the lease ran out, and both requests end on one user', async () => {
    const tenant = await t.createTenant('idem-lease');
    const g = gate();
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const store = t.ctx.eventStore;
    const real = store.appendToStream.bind(store);
    let held = false;
    vi.spyOn(store, 'appendToStream').mockImplementation(async (stream, events, options) => {
      // Only the first request's registration stalls.
      if (!held && stream.startsWith('user-') && events.some((e) => e.type === 'user.registered')) {
        held = true;
        entered();
        await g.promise;
      }
      return real(stream, events, options);
    });
    const stalled = create(tenant, 'lease-key');
    await inside;
    expectProblem(await create(tenant, 'lease-key'), 409);
    // The first request's process is as good as dead: past its lease a retry takes over.
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + LEASE_MS + 1000);
    const taken = await create(tenant, 'lease-key');
    expectStatus(taken, 201);
    vi.mocked(Date.now).mockRestore();
    g.open();
    const late = await stalled;
    expectStatus(late, 201);
    expect((late.json() as UserBody).id).toBe((taken.json() as UserBody).id);
    expect(await users(tenant)).toHaveLength(1);
  });

  it('two requests taking over the same expired lease at once: exactly one runs, the other is 409 (issue 20: the take-over is one conditional write)', async () => {
    const tenant = await t.createTenant('idem-takeover-race');
    const store = t.ctx.eventStore;
    const realAppend = store.appendToStream.bind(store);
    const stalled = gate();
    const original = gate();
    const takerInside = gate();
    let registrations = 0;
    vi.spyOn(store, 'appendToStream').mockImplementation(async (stream, events, options) => {
      if (stream.startsWith('user-') && events.some((e) => e.type === 'user.registered')) {
        registrations++;
        // The first request's registration stalls (its process is as good as dead); any later one is a taker's.
        if (registrations === 1) {
          original.open();
          await stalled.promise;
        } else takerInside.open();
      }
      return realAppend(stream, events, options);
    });
    const first = create(tenant, 'race-key');
    await original.promise;
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + LEASE_MS + 1000);

    // Both take-overs read the expired reservation before either writes; the second reader then
    // waits until the first runs under its take-over before it tries its own.
    const readStore = t.ctx.readStore;
    const realGet = readStore.get.bind(readStore);
    const bothRead = gate();
    let reads = 0;
    vi.spyOn(readStore, 'get').mockImplementation(async (collection, id) => {
      const doc = await realGet(collection, id);
      if (collection !== IDEMPOTENCY_COLLECTION || reads >= 2) return doc;
      const reader = ++reads;
      if (reader === 2) bothRead.open();
      await bothRead.promise;
      if (reader === 2) await takerInside.promise;
      return doc;
    });
    const answers = await Promise.all([create(tenant, 'race-key'), create(tenant, 'race-key')]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409]);
    vi.mocked(Date.now).mockRestore();
    stalled.open();
    expectStatus(await first, 201);
    // The original and one taker ran the handler; the loser never did.
    expect(registrations).toBe(2);
    expect(await users(tenant)).toHaveLength(1);
  });

  it('frees the key when the request is refused (nothing was created): a corrected request with the same key runs', async () => {
    const tenant = await t.createTenant('idem-refused');
    expectStatus(await create(tenant, 'first', { external_ref: 'taken' }), 201);
    expectProblem(await create(tenant, 'second', { external_ref: 'taken' }), 409);
    const corrected = await create(tenant, 'second', { external_ref: 'free' });
    expectStatus(corrected, 201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
    expect(await users(tenant)).toHaveLength(2);
  });

  it('purges the records of keys whose 24 hours are over, and only those (Limits: idempotency window 24 hours)', async () => {
    const tenant = await t.createTenant('idem-purge');
    expectStatus(await create(tenant, 'old'), 201);
    const count = () => t.ctx.readStore.count(IDEMPOTENCY_COLLECTION, { tenant_id: tenant.id });
    expect(await count()).toBe(1);
    await purgeExpiredKeys(t.ctx.readStore, Date.now() + 23 * 3600_000);
    expect(await count()).toBe(1);
    await purgeExpiredKeys(t.ctx.readStore, Date.now() + 24 * 3600_000 + 1000);
    expect(await count()).toBe(0);
  });
});
