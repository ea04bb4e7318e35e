import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { expectProblem, expectStatus, startTestApp, type TestApp } from '../support/server.js';
import { fixtureA, postUpload, requestFor } from '../ingest/uploadHelpers.js';

/**
 * Issue 27 ("Fairness under mixed load: … back-pressure as 429 with Retry-After when queues are
 * full, never unbounded memory"): uploads are refused before their body is read while the ETL
 * queue holds its limit of open jobs, instance-wide, for the uploading user's tenant (contracts §18) or for the user; a refused upload
 * stores nothing, and other users' uploads still go through while one user is at their limit.
 * ETL does not run here (projections only), so every accepted job stays open.
 */
let t: TestApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

async function usersOf(app: TestApp, n: number) {
  const tenant = await app.createTenant(`bp-${randomUUID()}`);
  const out: { id: string; token: string }[] = [];
  for (let i = 0; i < n; i++) {
    const user = await app.createUser(tenant.apiKey);
    out.push({ id: user.id, token: (await app.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] })).token });
  }
  return { tenant, users: out };
}

const openJobs = async (app: TestApp, apiKey: string) =>
  ((await app.call('GET', '/v1/pipeline/etl-jobs', { key: apiKey, query: { status: 'pending' } })).json() as { data: unknown[] }).data.length;

describe('upload back-pressure (issue 27)', () => {
  it("answers 429 with Retry-After once the user has ETL_MAX_OPEN_JOBS_PER_USER open jobs, stores nothing for it, and still accepts another user's upload", async () => {
    t = await startTestApp({ ETL_MAX_OPEN_JOBS_PER_USER: '2' }, { runBackground: 'projections' });
    const { tenant, users } = await usersOf(t, 2);
    const [busy, other] = users as [{ id: string; token: string }, { id: string; token: string }];
    for (let i = 0; i < 2; i++) expectStatus(await postUpload(t, 'device-a', busy.token, `u-${i}`, requestFor('device-a', fixtureA())), 202);

    const refused = await postUpload(t, 'device-a', busy.token, 'u-2', requestFor('device-a', fixtureA()));
    expect(expectProblem(refused, 429).detail).toMatch(/this user has 2 uploads waiting/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await openJobs(t, tenant.apiKey)).toBe(2);

    expectStatus(await postUpload(t, 'device-a', other.token, 'o-0', requestFor('device-a', fixtureA())), 202);
    expect(await openJobs(t, tenant.apiKey)).toBe(3);
  });

  it("contracts §18: answers 429 to every user of a tenant once it has ETL_MAX_OPEN_JOBS_PER_TENANT open jobs, and still accepts another tenant's upload", async () => {
    t = await startTestApp({ ETL_MAX_OPEN_JOBS_PER_TENANT: '2' }, { runBackground: 'projections' });
    const { tenant, users } = await usersOf(t, 3);
    expectStatus(await postUpload(t, 'device-a', users[0]!.token, 'a', requestFor('device-a', fixtureA())), 202);
    expectStatus(await postUpload(t, 'device-a', users[1]!.token, 'b', requestFor('device-a', fixtureA())), 202);
    const refused = await postUpload(t, 'device-a', users[2]!.token, 'c', requestFor('device-a', fixtureA()));
    expect(expectProblem(refused, 429).detail).toMatch(/this tenant has 2 uploads waiting/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await openJobs(t, tenant.apiKey)).toBe(2);
    const other = await usersOf(t, 1);
    expectStatus(await postUpload(t, 'device-a', other.users[0]!.token, 'o', requestFor('device-a', fixtureA())), 202);
    expect(await openJobs(t, other.tenant.apiKey)).toBe(1);
  });

  it('answers 429 to every user once the instance holds ETL_MAX_OPEN_JOBS open jobs', async () => {
    t = await startTestApp({ ETL_MAX_OPEN_JOBS: '2' }, { runBackground: 'projections' });
    const { tenant, users } = await usersOf(t, 3);
    expectStatus(await postUpload(t, 'device-a', users[0]!.token, 'a', requestFor('device-a', fixtureA())), 202);
    expectStatus(await postUpload(t, 'device-a', users[1]!.token, 'b', requestFor('device-a', fixtureA())), 202);
    // The instance-wide count is shared for a quarter of a second: wait it out rather than race it.
    await new Promise((r) => setTimeout(r, 300));
    const refused = await postUpload(t, 'device-a', users[2]!.token, 'c', requestFor('device-a', fixtureA()));
    expect(expectProblem(refused, 429).detail).toMatch(/processing queue holds 2 uploads/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await openJobs(t, tenant.apiKey)).toBe(2);
  });

  it('still answers 404 for an unknown device and 401 without credentials before counting anything', async () => {
    t = await startTestApp({ ETL_MAX_OPEN_JOBS: '1', ETL_MAX_OPEN_JOBS_PER_USER: '1' }, { runBackground: 'projections' });
    const { users } = await usersOf(t, 1);
    expectStatus(await postUpload(t, 'device-a', users[0]!.token, 'a', requestFor('device-a', fixtureA())), 202);
    expectProblem(await postUpload(t, 'device-zz', users[0]!.token, 'b', requestFor('device-a', fixtureA())), 404);
    expectProblem(await postUpload(t, 'device-a', null, 'c', requestFor('device-a', fixtureA())), 401);
  });
});
