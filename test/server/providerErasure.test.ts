import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { deletionStream } from '../../commands/deletions/deletionJob.js';
import { DATA_ERASED, PROVIDER_DATA_ERASED } from '../../src/catalog/eventTypes.js';
import { uploadStream } from '../../commands/ingestion/upload.js';
import { countProviderRecords } from '../../queries/deletions/countProviderRecords.js';
import { dataKeyId } from '../../src/crypto/dataKeys.js';
import { deviceAForm, fixtureA, fixtureB, listFiles, postUpload, requestFor, waitForEtl } from '../ingest/uploadHelpers.js';
import { expectProblem, expectStatus, gate, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * DELETE /v1/users/{id}/data/{provider} (spec "Credentials and users", its erasure paragraph, and
 * "States: Provider erasure"; contracts §8 data.erased).
 */
let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('erase-a');
  other = await t.createTenant('erase-b');
});
afterAll(async () => t?.close());
afterEach(() => {
  vi.restoreAllMocks();
  t.ctx.erasureHooks.length = 0;
});

const erase = (userId: string, provider: string, key = tenant.apiKey) => t.call('DELETE', `/v1/users/${userId}/data/${provider}`, { key });
const jobOf = (res: { json: () => unknown }) => (res.json() as { job_id: string }).job_id;

/** Holds every deletion job before its runner claims it, until `open()`. */
function holdJobs() {
  const g = gate();
  const store = t.ctx.eventStore;
  const real = store.appendToStream.bind(store);
  vi.spyOn(store, 'appendToStream').mockImplementation(async (stream, events, options) => {
    if (stream.startsWith('deletion-') && events.some((e) => e.type === 'deletion.started')) await g.promise;
    return real(stream, events, options);
  });
  return g;
}

/** A user with device-a and device-b data, and an upload token. */
async function userWithData(): Promise<{ userId: string; token: string }> {
  const userId = (await t.createUser(tenant.apiKey)).id;
  const { token } = await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
  expectStatus(await postUpload(t, 'device-a', token, `a-${randomUUID()}`, deviceAForm(fixtureA())), 202);
  expectStatus(await postUpload(t, 'device-b', token, `b-${randomUUID()}`, requestFor('device-b', fixtureB())), 202);
  await waitForEtl(t, tenant.apiKey, userId);
  return { userId, token };
}

describe('erasing one provider’s data (Credentials and users: DELETE /v1/users/{id}/data/{provider})', { timeout: 60_000 }, () => {
  it('answers 202 {job_id}; the job (provider set) ends done, announced by data.erased with records_deleted; the provider’s records, rejected lines and ETL jobs are gone, the other provider’s stay', async () => {
    const { userId } = await userWithData();
    const records = await countProviderRecords(t.ctx.readStore, userId, 'device-a');
    expect(records).toBeGreaterThan(0);
    const otherRecords = await countProviderRecords(t.ctx.readStore, userId, 'device-b');

    const res = await erase(userId, 'device-a');
    expectStatus(res, 202);
    expect(Object.keys(res.json() as object)).toEqual(['job_id']);
    const job = await t.waitForDeletion(tenant.apiKey, jobOf(res));
    expect(job).toMatchObject({ job_id: jobOf(res), user_id: userId, provider: 'device-a', status: 'done' });
    expect(job.finished_at).toEqual(expect.any(String));

    const events = await t.ctx.eventStore.readStream(deletionStream(jobOf(res)));
    const erased = events.find((e) => e.type === DATA_ERASED)!;
    expect(erased.data).toMatchObject({ user_id: userId, provider: 'device-a', job_id: jobOf(res), records_deleted: records, external_ref: null });
    expect(events.filter((e) => e.type === PROVIDER_DATA_ERASED)).toHaveLength(1);

    await t.ctx.settle();
    expect(await countProviderRecords(t.ctx.readStore, userId, 'device-a')).toBe(0);
    for (const c of ['etl_jobs', 'rejected_records', 'sleep_phases']) expect(await t.ctx.readStore.count(c, { user_id: userId, provider: 'device-a' }), c).toBe(0);
    expect(await countProviderRecords(t.ctx.readStore, userId, 'device-b')).toBe(otherRecords);
    // The data key of the erased generation is gone for good.
    expect(await t.ctx.dataKeys.get(dataKeyId({ userId, provider: 'device-a', generation: 0 }))).toBeNull();
    expect(await t.ctx.dataKeys.get(dataKeyId({ userId, provider: 'device-b', generation: 0 }))).not.toBeNull();
    expect(listFiles(join(t.dataDir, 'raw')).filter((f) => f.startsWith(`${userId}_device-a_`))).toEqual([]);
  });

  it('leaves the user, their order of sources and their other provider alone (erasure paragraph: the user, other providers and the order of sources stay)', async () => {
    const { userId } = await userWithData();
    const priorities = { priorities: { heart: ['garmin', 'apple'], '*': ['oura'] } };
    expectStatus(await t.call('PUT', `/v1/users/${userId}/source-priorities`, { key: tenant.apiKey, body: priorities }), 200);
    const job = await t.waitForDeletion(tenant.apiKey, jobOf(await erase(userId, 'device-a')));
    expect(job.status).toBe('done');
    expectStatus(await t.call('GET', `/v1/users/${userId}`, { key: tenant.apiKey }), 200);
    expect((await t.call('GET', `/v1/users/${userId}/source-priorities`, { key: tenant.apiKey })).json()).toMatchObject(priorities);
    const samples = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', view: 'all', limit: '1000' } });
    expect(new Set((samples.json() as { data: { provider: string }[] }).data.map((s) => s.provider))).toEqual(new Set(['device-b']));
  });

  it('answers a repeated request while the job is unfinished with the same job, and starts a new job once it is done (Provider erasure)', async () => {
    const { userId } = await userWithData();
    const g = holdJobs();
    let first: string;
    try {
      first = jobOf(await erase(userId, 'device-b'));
      const again = await erase(userId, 'device-b');
      expectStatus(again, 202);
      expect(jobOf(again)).toBe(first);
      expect(((await t.call('GET', `/v1/deletions/${first}`, { key: tenant.apiKey })).json() as { status: string }).status).toBe('pending');
    } finally {
      g.open();
    }
    expect((await t.waitForDeletion(tenant.apiKey, first)).status).toBe('done');
    const next = await erase(userId, 'device-b');
    expectStatus(next, 202);
    expect(jobOf(next)).not.toBe(first);
    expect((await t.waitForDeletion(tenant.apiKey, jobOf(next))).status).toBe('done');
  });

  it('refuses uploads for that user and provider with 409 while the job runs, keeping nothing, and accepts new data (the same Upload-Id too) once it is done (Provider erasure; Errors 409)', async () => {
    const { userId, token } = await userWithData();
    const g = holdJobs();
    let jobId: string;
    try {
      jobId = jobOf(await erase(userId, 'device-b'));
      const rawBefore = listFiles(join(t.dataDir, 'raw'));
      const refused = await postUpload(t, 'device-b', token, 'during-erasure', requestFor('device-b', fixtureB()));
      expectProblem(refused, 409);
      expect(listFiles(join(t.dataDir, 'raw'))).toEqual(rawBefore);
      expect(await t.ctx.eventStore.readStream(uploadStream(userId, 'device-b', 'during-erasure'))).toEqual([]);
      // Another provider of the same user is not affected.
      expectStatus(await postUpload(t, 'device-a', token, 'other-provider', deviceAForm(fixtureA())), 202);
    } finally {
      g.open();
    }
    expect((await t.waitForDeletion(tenant.apiKey, jobId)).status).toBe('done');
    expectStatus(await postUpload(t, 'device-b', token, 'during-erasure', requestFor('device-b', fixtureB())), 202);
    await waitForEtl(t, tenant.apiKey, userId);
    expect(await countProviderRecords(t.ctx.readStore, userId, 'device-b')).toBeGreaterThan(0);
  });

  it('treats an Upload-Id used before the erasure as new afterwards: the old upload cannot restore anything, the new one stores its own data (Provider erasure: old raw objects cannot restore data)', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    const { token } = await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
    expectStatus(await postUpload(t, 'device-b', token, 'reused', requestFor('device-b', fixtureB())), 202);
    await waitForEtl(t, tenant.apiKey, userId);
    const before = await countProviderRecords(t.ctx.readStore, userId, 'device-b');
    expect((await t.waitForDeletion(tenant.apiKey, jobOf(await erase(userId, 'device-b')))).status).toBe('done');
    // The first upload's stream is tombstoned: nothing can retry or replay it.
    await expect(t.ctx.eventStore.readStream(uploadStream(userId, 'device-b', 'reused'))).rejects.toThrow(/deleted/);
    const again = await postUpload(t, 'device-b', token, 'reused', requestFor('device-b', fixtureB()));
    expectStatus(again, 202);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    await waitForEtl(t, tenant.apiKey, userId);
    expect(await countProviderRecords(t.ctx.readStore, userId, 'device-b')).toBe(before);
  });

  it('answers 409 while the user is still connected to the provider, and starts nothing (Credentials and users; Errors 409)', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    t.ctx.erasureHooks.push({ name: 'connections', isConnected: async (_t, u, p) => u === userId && p === 'oura' });
    expectProblem(await erase(userId, 'oura'), 409);
    expect(await t.ctx.readStore.count('deletion_jobs', { user_id: userId })).toBe(0);
    // Another provider of the same user is not connected.
    expectStatus(await erase(userId, 'device-a'), 202);
  });

  it('erases a known provider the user has no data from: a job that ends done with records_deleted 0', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    const res = await erase(userId, 'withings');
    expectStatus(res, 202);
    expect((await t.waitForDeletion(tenant.apiKey, jobOf(res))).status).toBe('done');
    const erased = (await t.ctx.eventStore.readStream(deletionStream(jobOf(res)))).find((e) => e.type === DATA_ERASED)!;
    expect(erased.data).toMatchObject({ records_deleted: 0, provider: 'withings' });
  });

  it('answers 404 for a provider unknown to this build, creating no job (Errors 404)', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    for (const provider of ['device-z', 'OURA', 'constructor', '%2e%2e']) expectProblem(await erase(userId, provider), 404);
    expect(await t.ctx.readStore.count('deletion_jobs', { user_id: userId })).toBe(0);
  });

  it("answers 404 for an unknown, malformed or another tenant's user, and for a user being deleted (Conventions 6; Errors 404)", async () => {
    expectProblem(await erase(randomUUID(), 'device-a'), 404);
    expectProblem(await erase('not-a-uuid', 'device-a'), 404);
    const theirs = (await t.createUser(other.apiKey)).id;
    expectProblem(await erase(theirs, 'device-a'), 404);
    expect(await t.ctx.readStore.count('deletion_jobs', { user_id: theirs })).toBe(0);
    const deleting = (await t.createUser(tenant.apiKey)).id;
    const g = holdJobs();
    try {
      await t.deleteUser(tenant.apiKey, deleting);
      expectProblem(await erase(deleting, 'device-a'), 404);
    } finally {
      g.open();
    }
  });

  it('needs a tenant key (Authentication 5)', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    expect((await t.call('DELETE', `/v1/users/${userId}/data/device-a`)).statusCode).toBe(401);
    const { token } = await t.mintToken(tenant.apiKey, userId, { scopes: ['read'] });
    expectProblem(await erase(userId, 'device-a', token), 403);
  });
});
