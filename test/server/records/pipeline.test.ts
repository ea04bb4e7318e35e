import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';
import { createJob } from './pipelineFixtures.js';

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let userId: string;

type Job = { id: number; user_id: string; provider: string; tier: string; status: string; attempts: number; error: string | null; created_at: string; next_attempt_at: string | null };
type Page = { data: Job[]; next_cursor: string | null };

const jobs = async (query: Record<string, string> = {}, key = tenant.apiKey) => {
  const res = await t.call('GET', '/v1/pipeline/etl-jobs', { key, query });
  expectStatus(res, 200);
  return res.json() as Page;
};

beforeAll(async () => {
  t = await startTestApp();
  // Jobs are made by hand; the job runner must not run them.
  await t.ctx.jobs.stop();
  tenant = await t.createTenant('pipeline-a');
  other = await t.createTenant('pipeline-b');
  userId = (await t.createUser(tenant.apiKey)).id;
  const who = { userId, tenantId: tenant.id };
  await createJob(t, who, 'device-a', 'parked');
  await createJob(t, who, 'device-b', 'parked');
  await createJob(t, who, 'device-a', 'parked');
  await createJob(t, who, 'device-a', 'pending');
  await createJob(t, who, 'device-c', 'running');
  await createJob(t, who, 'device-a', 'done');
  const otherUser = (await t.createUser(other.apiKey)).id;
  await createJob(t, { userId: otherUser, tenantId: other.id }, 'device-a', 'parked');
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/pipeline/etl-jobs (spec Pipeline; ETL job)', () => {
  it('lists parked jobs by default, newest first, with the ETL job fields (Pipeline: status parked default, newest first; ETL job fields)', async () => {
    const page = await jobs();
    expect(page.data).toHaveLength(3);
    expect(page.data.every((j) => j.status === 'parked')).toBe(true);
    const ids = page.data.map((j) => j.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(page.next_cursor).toBeNull();
    expect(page.data[0]).toEqual({
      id: expect.any(Number),
      user_id: userId,
      provider: 'device-a',
      tier: 'upload',
      status: 'parked',
      attempts: 5,
      error: 'payload unreadable',
      created_at: '2026-11-03T10:00:00.000Z',
      next_attempt_at: null,
    });
  });

  it('filters by status pending or running, and by provider (Pipeline: status, provider)', async () => {
    expect((await jobs({ status: 'pending' })).data.map((j) => [j.status, j.provider])).toEqual([['pending', 'device-a']]);
    expect((await jobs({ status: 'running' })).data.map((j) => [j.status, j.provider])).toEqual([['running', 'device-c']]);
    expect((await jobs({ provider: 'device-b' })).data.map((j) => [j.status, j.provider])).toEqual([['parked', 'device-b']]);
  });

  it('refuses a status other than parked, pending, running (ETL job: filter values)', async () => {
    expectProblem(await t.call('GET', '/v1/pipeline/etl-jobs', { key: tenant.apiKey, query: { status: 'done' } }), 400);
  });

  it('pages with limit and cursor, newest first across pages (Pipeline: limit, cursor; Conventions 1)', async () => {
    const first = await jobs({ limit: '2' });
    expect(first.data).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await jobs({ limit: '2', cursor: first.next_cursor! });
    expect(second.data).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    const ids = [...first.data, ...second.data].map((j) => j.id);
    expect(ids).toEqual((await jobs()).data.map((j) => j.id));
  });

  it('takes limit 1..100 and refuses above 100 (Pipeline: limit 1..100; Limits: ETL job list page)', async () => {
    expectStatus(await t.call('GET', '/v1/pipeline/etl-jobs', { key: tenant.apiKey, query: { limit: '100' } }), 200);
    expectProblem(await t.call('GET', '/v1/pipeline/etl-jobs', { key: tenant.apiKey, query: { limit: '101' } }), 400);
    expectProblem(await t.call('GET', '/v1/pipeline/etl-jobs', { key: tenant.apiKey, query: { limit: '0' } }), 400);
  });

  it("lists only the caller's tenant's jobs (Authentication 2: tenant routes)", async () => {
    const mine = await jobs();
    expect(mine.data.every((j) => j.user_id === userId)).toBe(true);
    const theirs = await jobs({}, other.apiKey);
    expect(theirs.data).toHaveLength(1);
  });

  it('refuses a cursor of another filter (Errors 400: invalid cursor)', async () => {
    const first = await jobs({ limit: '1' });
    expectProblem(await t.call('GET', '/v1/pipeline/etl-jobs', { key: tenant.apiKey, query: { limit: '1', status: 'pending', cursor: first.next_cursor! } }), 400);
  });

  it('needs a tenant key (Authentication 5)', async () => {
    expectStatus(await t.call('GET', '/v1/pipeline/etl-jobs'), 401);
    const token = await t.mintToken(tenant.apiKey, userId);
    expectProblem(await t.call('GET', '/v1/pipeline/etl-jobs', { key: token.token }), 403);
  });
});

describe('POST /v1/pipeline/etl-jobs/{job_id}/retry (spec ETL job: a parked job waits for a retry)', () => {
  it('puts a parked job back to pending with fresh attempts and answers the job (ETL job)', async () => {
    const [job] = (await jobs({ provider: 'device-b' })).data;
    const res = await t.call('POST', `/v1/pipeline/etl-jobs/${job!.id}/retry`, { key: tenant.apiKey });
    expectStatus(res, 200);
    expect(res.json()).toMatchObject({ id: job!.id, status: 'pending', attempts: 0, provider: 'device-b', next_attempt_at: expect.any(String) });
    expect((await jobs({ provider: 'device-b' })).data).toEqual([]);
    expect((await jobs({ status: 'pending', provider: 'device-b' })).data.map((j) => j.id)).toEqual([job!.id]);
  });

  it('answers 409 for a job that is not parked (ETL job: only parked jobs wait for a retry; Errors 409)', async () => {
    const [pending] = (await jobs({ status: 'pending', provider: 'device-a' })).data;
    expectProblem(await t.call('POST', `/v1/pipeline/etl-jobs/${pending!.id}/retry`, { key: tenant.apiKey }), 409);
  });

  it("answers 404 for another tenant's job and an unknown id (Errors 404: other-tenant job)", async () => {
    const [theirs] = (await jobs({}, other.apiKey)).data;
    expectProblem(await t.call('POST', `/v1/pipeline/etl-jobs/${theirs!.id}/retry`, { key: tenant.apiKey }), 404);
    expectProblem(await t.call('POST', '/v1/pipeline/etl-jobs/999999999/retry', { key: tenant.apiKey }), 404);
    expect((await jobs({}, other.apiKey)).data.map((j) => j.status)).toEqual(['parked']);
  });

  it('refuses a job_id that is not an integer (Pipeline: job_id integer)', async () => {
    expectProblem(await t.call('POST', '/v1/pipeline/etl-jobs/abc/retry', { key: tenant.apiKey }), 400);
  });
});
