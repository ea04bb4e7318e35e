import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event } from '../../src/eventstore/eventStore.js';
import type { FreshnessEntry as Entry } from '../../queries/users/getFreshness.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { deviceAForm, postUpload, waitForEtl } from '../ingest/uploadHelpers.js';
import { createJob } from './records/pipelineFixtures.js';

/**
 * contracts §6 "freshness": GET /v1/users/{id}/freshness answers {data: [entry]}, one entry per
 * provider the user has data from; `state` is the first rule that holds (disconnected,
 * needs_reauth, syncing, failing, stale, fresh). Spec "Freshness of a source"; contracts §7 for
 * the provider kinds. Rules in docs/freshness.md.
 */

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let uploader: string;

const HOUR = 3_600_000;
const now = Date.now();
/** HealthKit times to the second (docs/formats/device-a.md). */
const at = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const stored = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString();

const APPLE = { source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.0001', device_model: 'Watch', product_type: 'Watch7,1' };
// A workout that starts before the last heart rate reading but ends after it: the latest end is the workout's.
const HR_AT = now - 3 * HOUR;
const WORKOUT = { start: now - 4 * HOUR, end: now - 2 * HOUR };

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('freshness-a');
  other = await t.createTenant('freshness-b');
  uploader = (await t.createUser(tenant.apiKey)).id;
  const { token } = await t.mintToken(tenant.apiKey, uploader, { scopes: ['upload'] });
  const lines = [
    { kind: 'quantity', uuid: 'F0000000-0000-4000-8000-000000000001', type: 'HKQuantityTypeIdentifierHeartRate', value: 58, unit: 'count/min', start_date: at(HR_AT - HOUR), end_date: at(HR_AT - HOUR), ...APPLE },
    { kind: 'quantity', uuid: 'F0000000-0000-4000-8000-000000000002', type: 'HKQuantityTypeIdentifierHeartRate', value: 61, unit: 'count/min', start_date: at(HR_AT), end_date: at(HR_AT), ...APPLE },
    { kind: 'workout', uuid: 'F0000000-0000-4000-8000-000000000003', activity_type: 'HKWorkoutActivityTypeWalking', start_date: at(WORKOUT.start), end_date: at(WORKOUT.end), ...APPLE },
  ];
  const ndjson = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  expectStatus(await postUpload(t, 'device-a', token, 'freshness-1', deviceAForm(gzipSync(ndjson))), 202);
  await waitForEtl(t, tenant.apiKey, uploader);
  // The jobs below are made by hand; the job runner must not run them.
  await t.ctx.jobs.stop();
});
afterAll(async () => {
  await t?.close();
});

async function freshness(userId: string, key = tenant.apiKey): Promise<Entry[]> {
  const res = await t.call('GET', `/v1/users/${userId}/freshness`, { key });
  expectStatus(res, 200);
  const body = res.json() as { data: Entry[] };
  expect(Object.keys(body)).toEqual(['data']);
  return body.data;
}

describe('GET /v1/users/{id}/freshness (contracts §6; spec Freshness of a source)', () => {
  it('shows a device provider with an upload as fresh, synced through the end of its latest record, with the lag (contracts §6: synced_through, lag_seconds, state fresh)', async () => {
    const before = Date.now();
    const [entry, ...rest] = await freshness(uploader);
    const after = Date.now();
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      provider: 'device-a',
      kind: 'device',
      state: 'fresh',
      synced_through: stored(WORKOUT.end),
      last_notification_at: null,
      next_pull_at: null,
      last_error: null,
    });
    expect(Object.keys(entry!).sort()).toEqual(
      ['kind', 'last_error', 'last_notification_at', 'last_received_at', 'lag_seconds', 'next_pull_at', 'provider', 'state', 'synced_through'].sort(),
    );
    const end = Date.parse(entry!.synced_through!);
    expect(entry!.lag_seconds).toBeGreaterThanOrEqual(Math.floor((before - end) / 1000));
    expect(entry!.lag_seconds).toBeLessThanOrEqual(Math.floor((after - end) / 1000));
    expect(Number.isInteger(entry!.lag_seconds)).toBe(true);
  });

  it('gives last_received_at as the finish of the upload that stored the records (contracts §6: last_received_at)', async () => {
    const [entry] = await freshness(uploader);
    const [job] = await t.ctx.readStore.find<{ _id: string; finished_at: string }>('etl_jobs', { filter: { user_id: uploader } });
    expect(entry!.last_received_at).toBe(job!.finished_at);
    expect(Date.parse(entry!.last_received_at!)).toBeLessThanOrEqual(Date.now());
  });

  it('is syncing while an ETL job of the provider is pending or running (contracts §6: state syncing)', async () => {
    for (const state of ['pending', 'running'] as const) {
      const userId = (await t.createUser(tenant.apiKey)).id;
      await createJob(t, { userId, tenantId: tenant.id }, 'device-b', state, new Date().toISOString());
      expect(await freshness(userId)).toEqual([
        {
          provider: 'device-b',
          kind: 'device',
          state: 'syncing',
          synced_through: null,
          lag_seconds: null,
          last_received_at: null,
          last_notification_at: null,
          next_pull_at: null,
          last_error: null,
        },
      ]);
    }
  });

  it('is failing with the error when a job is parked (contracts §6: state failing, last_error)', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    await createJob(t, { userId, tenantId: tenant.id }, 'device-c', 'parked', new Date().toISOString());
    const [entry] = await freshness(userId);
    expect(entry).toMatchObject({ provider: 'device-c', kind: 'device', state: 'failing', last_error: 'payload unreadable', synced_through: null });
  });

  it('is failing, not fresh, once a job is parked after data was received; syncing wins while another job is queued (contracts §6: first rule that holds)', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    const who = { userId, tenantId: tenant.id };
    await createJob(t, who, 'device-a', 'parked', new Date().toISOString());
    expect((await freshness(userId))[0]).toMatchObject({ state: 'failing', last_error: 'payload unreadable' });
    await createJob(t, who, 'device-a', 'pending', new Date().toISOString());
    // Still not healthy: the parked job's error stays visible while the new one waits.
    expect((await freshness(userId))[0]).toMatchObject({ state: 'syncing', last_error: 'payload unreadable' });
  });

  it('is failing while a job waits for its retry after a failed attempt (contracts §6: "the last … ETL job failed")', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    const who = { userId, tenantId: tenant.id };
    const stream = await createJob(t, who, 'device-b', 'running', new Date().toISOString());
    const failedAt = new Date();
    await t.ctx.eventStore.appendToStream(stream, [
      {
        type: 'etl.job_failed',
        data: { ...{ user_id: userId, tenant_id: tenant.id }, attempt: 1, error: 'raw object missing', failed_at: failedAt.toISOString(), next_attempt_at: new Date(failedAt.getTime() + 10_000).toISOString() },
      } as Event,
    ]);
    await t.ctx.projectors.waitForIdle();
    expect((await freshness(userId))[0]).toMatchObject({ provider: 'device-b', state: 'failing', last_error: 'raw object missing' });
  });

  it('answers {data: []} for a user without data (contracts §6: one entry per provider the user has data from)', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    expect(await freshness(userId)).toEqual([]);
  });

  it('lists one entry per provider, by provider (contracts §6: one entry per provider)', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    const who = { userId, tenantId: tenant.id };
    await createJob(t, who, 'device-c', 'pending', new Date().toISOString());
    await createJob(t, who, 'device-a', 'parked', new Date().toISOString());
    await createJob(t, who, 'device-a', 'parked', new Date().toISOString());
    expect((await freshness(userId)).map((e) => [e.provider, e.state])).toEqual([
      ['device-a', 'failing'],
      ['device-c', 'syncing'],
    ]);
  });

  it("answers 404 for another tenant's user, an unknown id and a user being deleted (spec Conventions 6; Reads rule 6)", async () => {
    expectProblem(await t.call('GET', `/v1/users/${uploader}/freshness`, { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', '/v1/users/00000000-0000-4000-8000-000000000000/freshness', { key: tenant.apiKey }), 404);
    expectProblem(await t.call('GET', '/v1/users/nope/freshness', { key: tenant.apiKey }), 404);
    const leaving = (await t.createUser(tenant.apiKey)).id;
    await t.deleteUser(tenant.apiKey, leaving);
    expectProblem(await t.call('GET', `/v1/users/${leaving}/freshness`, { key: tenant.apiKey }), 404);
  });

  it('answers 401 without a key and 403 for a user token (Errors 2)', async () => {
    const { token } = await t.mintToken(tenant.apiKey, uploader, { scopes: ['read'] });
    expectProblem(await t.call('GET', `/v1/users/${uploader}/freshness`), 401);
    expectProblem(await t.call('GET', `/v1/users/${uploader}/freshness`, { key: token }), 403);
  });
});
