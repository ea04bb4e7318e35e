import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { deviceAForm, postUpload, waitForEtl } from '../ingest/uploadHelpers.js';
import { ingestSamples, quantity } from './records/pipelineFixtures.js';

/**
 * contracts §6 "source order": PUT /v1/users/{id}/source-priorities (tenant key) replaces the
 * user's order; GET answers it; an unknown key or a bad value is 400 and changes nothing; reads,
 * statistics and coverage answered after the PUT's answer already use the new order. Spec
 * "Merged view" (ranking): the user's order for the metric, then its group, then `*`, then the
 * built-in order.
 */

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

type Priorities = { priorities: Record<string, string[]>; updated_at: string | null };

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('priorities-a');
  other = await t.createTenant('priorities-b');
});
afterAll(async () => {
  await t?.close();
});

const url = (userId: string) => `/v1/users/${userId}/source-priorities`;
const put = (userId: string, body: unknown, key = tenant.apiKey) => t.call('PUT', url(userId), { key, body });
const get = (userId: string, key = tenant.apiKey) => t.call('GET', url(userId), { key });
async function current(userId: string): Promise<Priorities> {
  const res = await get(userId);
  expectStatus(res, 200);
  return res.json() as Priorities;
}

describe('PUT and GET /v1/users/{id}/source-priorities (contracts §6)', () => {
  it('answers {} and null before any PUT (contracts §6: "{} and null before any PUT")', async () => {
    const user = await t.createUser(tenant.apiKey);
    expect(await current(user.id)).toEqual({ priorities: {}, updated_at: null });
  });

  it('answers 200 {priorities, updated_at} to a PUT, and GET answers the same (contracts §6: "Answer 200 {priorities, updated_at}; GET … the same shape")', async () => {
    const user = await t.createUser(tenant.apiKey);
    const body = { priorities: { heart_rate: ['garmin', 'apple'], sleep_analysis: ['oura'], heart: ['polar'], '*': ['withings', 'apple'] } };
    const before = Date.now();
    const res = await put(user.id, body);
    expectStatus(res, 200);
    const answer = res.json() as Priorities;
    expect(Object.keys(answer).sort()).toEqual(['priorities', 'updated_at']);
    expect(answer.priorities).toEqual(body.priorities);
    expect(Date.parse(answer.updated_at!)).toBeGreaterThanOrEqual(before - 1000);
    expect(await current(user.id)).toEqual(answer);
  });

  it('replaces the whole order: keys absent from the new body are gone (contracts §6: "The body replaces the whole order")', async () => {
    const user = await t.createUser(tenant.apiKey);
    expectStatus(await put(user.id, { priorities: { heart_rate: ['garmin'], body: ['withings'] } }), 200);
    expectStatus(await put(user.id, { priorities: { activity: ['fitbit', 'apple'] } }), 200);
    expect((await current(user.id)).priorities).toEqual({ activity: ['fitbit', 'apple'] });
    // An empty object is a valid order: back to the built-in one, with the time it was set.
    expectStatus(await put(user.id, { priorities: {} }), 200);
    const cleared = await current(user.id);
    expect(cleared.priorities).toEqual({});
    expect(cleared.updated_at).not.toBeNull();
  });

  it('takes every group of the contract, quantity and category types, and * as keys (contracts §6: keys)', async () => {
    const user = await t.createUser(tenant.apiKey);
    const priorities = {
      activity: ['a'],
      heart: ['a'],
      recovery: ['a'],
      body: ['a'],
      sleep: ['a'],
      workouts: ['a'],
      '*': ['a'],
      step_count: ['a'],
      body_mass: ['a'],
      sleep_analysis: ['a'],
      menstrual_flow: ['a'],
      mindful_session: ['a'],
      stand_hour: ['a'],
      high_heart_rate_event: ['a'],
    };
    expectStatus(await put(user.id, { priorities }), 200);
    expect((await current(user.id)).priorities).toEqual(priorities);
  });

  it('takes 20 distinct sources and names of 64 characters (contracts §6: "1 to 20 distinct source names of 1 to 64 characters")', async () => {
    const user = await t.createUser(tenant.apiKey);
    const twenty = Array.from({ length: 20 }, (_, i) => `source-${i}`);
    const long = 'x'.repeat(64);
    expectStatus(await put(user.id, { priorities: { heart_rate: twenty, '*': [long] } }), 200);
    expect((await current(user.id)).priorities).toEqual({ heart_rate: twenty, '*': [long] });
  });

  it('refuses an unknown key or a bad value with 400 and changes nothing (contracts §6: "An unknown key or a bad value is 400 and changes nothing")', async () => {
    const user = await t.createUser(tenant.apiKey);
    const res = await put(user.id, { priorities: { heart_rate: ['garmin', 'apple'] } });
    expectStatus(res, 200);
    const before = res.json() as Priorities;
    const refused: [string, unknown][] = [
      ['an unknown key', { priorities: { heart_rate: ['apple'], not_a_metric: ['apple'] } }],
      ['a group outside the contract', { priorities: { vitals: ['apple'] } }],
      ['an empty list', { priorities: { heart_rate: [] } }],
      ['21 sources', { priorities: { heart_rate: Array.from({ length: 21 }, (_, i) => `s${i}`) } }],
      ['a duplicate', { priorities: { heart_rate: ['apple', 'garmin', 'apple'] } }],
      ['a 65-character name', { priorities: { heart_rate: ['x'.repeat(65)] } }],
      ['an empty name', { priorities: { heart_rate: [''] } }],
      ['a non-array value', { priorities: { heart_rate: 'apple' } }],
      ['a non-string source', { priorities: { heart_rate: [1] } }],
      ['priorities not an object', { priorities: ['apple'] }],
      ['no priorities', {}],
    ];
    for (const [what, body] of refused) {
      const problem = expectProblem(await put(user.id, body), 400);
      expect(problem.detail.length, what).toBeGreaterThan(0);
      expect(await current(user.id), what).toEqual(before);
    }
  });

  it("names the unknown key in the problem's detail (Errors 1)", async () => {
    const user = await t.createUser(tenant.apiKey);
    const problem = expectProblem(await put(user.id, { priorities: { heartrate: ['apple'] } }), 400);
    expect(problem.detail).toContain('heartrate');
  });

  it("answers 404 for another tenant's user, an unknown or malformed id, and a user being deleted (spec Conventions 6, Errors 2: 404)", async () => {
    const theirs = await t.createUser(other.apiKey);
    const body = { priorities: { heart_rate: ['apple'] } };
    expectProblem(await put(theirs.id, body), 404);
    expectProblem(await get(theirs.id), 404);
    // The other tenant's user kept no order from the refused PUT.
    expect((await get(theirs.id, other.apiKey)).json()).toEqual({ priorities: {}, updated_at: null });
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expectProblem(await put(id, body), 404);
      expectProblem(await get(id), 404);
    }
    const leaving = await t.createUser(tenant.apiKey);
    await t.deleteUser(tenant.apiKey, leaving.id);
    expectProblem(await put(leaving.id, body), 404);
    expectProblem(await get(leaving.id), 404);
  });

  it('answers 401 without a key and 403 for a user token (Errors 2)', async () => {
    const user = await t.createUser(tenant.apiKey);
    const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['read'] });
    expectProblem(await t.call('PUT', url(user.id), { body: { priorities: {} } }), 401);
    expectProblem(await t.call('PUT', url(user.id), { key: token, body: { priorities: {} } }), 403);
    expectProblem(await t.call('GET', url(user.id), { key: token }), 403);
  });
});

// --- The order in use ----------------------------------------------------------------------

const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** HealthKit lines (docs/formats/device-a.md) from two apps: the source is the app's vendor (docs/sources.md). */
const APPLE = { source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.0001', device_model: 'Watch', product_type: 'Watch7,1' };
const GARMIN = { source_name: 'Garmin Connect', source_bundle_id: 'com.garmin.connect.mobile', device_model: 'Forerunner 965', product_type: null };
const OURA = { source_name: 'Oura', source_bundle_id: 'com.ouraring.oura', device_model: 'Oura Ring', product_type: null };

type Row = { source: string; provider: string; is_primary_source: boolean; value?: number };

describe('the order in use: merged reads, statistics and coverage (contracts §6; spec Merged view: ranking)', () => {
  let userId: string;
  const base = Date.parse('2026-11-20T08:00:00Z');

  beforeAll(async () => {
    userId = (await t.createUser(tenant.apiKey)).id;
    const { token } = await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
    // Two sources of one heart rate reading (within 5 minutes: one measurement) and of one stretch of sleep (overlapping).
    const lines = [
      { kind: 'quantity', uuid: 'A0000000-0000-4000-8000-000000000001', type: 'HKQuantityTypeIdentifierHeartRate', value: 61, unit: 'count/min', start_date: at(base), end_date: at(base), ...APPLE },
      { kind: 'quantity', uuid: 'B0000000-0000-4000-8000-000000000001', type: 'HKQuantityTypeIdentifierHeartRate', value: 64, unit: 'count/min', start_date: at(base + 60_000), end_date: at(base + 60_000), ...GARMIN },
      { kind: 'category', uuid: 'A0000000-0000-4000-8000-000000000002', type: 'HKCategoryTypeIdentifierSleepAnalysis', value: 'HKCategoryValueSleepAnalysisAsleepCore', start_date: at(base - 6 * HOUR), end_date: at(base - 5 * HOUR), ...APPLE },
      { kind: 'category', uuid: 'C0000000-0000-4000-8000-000000000002', type: 'HKCategoryTypeIdentifierSleepAnalysis', value: 'HKCategoryValueSleepAnalysisAsleepCore', start_date: at(base - 6 * HOUR + 600_000), end_date: at(base - 5 * HOUR + 600_000), ...OURA },
    ];
    const ndjson = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    expectStatus(await postUpload(t, 'device-a', token, 'priorities-1', deviceAForm(gzipSync(ndjson))), 202);
    await waitForEtl(t, tenant.apiKey, userId);
  });

  const merged = async (path: string, query: Record<string, string>) => {
    const res = await t.call('GET', `/v1/users/${userId}/${path}`, { key: tenant.apiKey, query: { ...query, view: 'merged' } });
    expectStatus(res, 200);
    return (res.json() as { data: Row[] }).data;
  };
  const heartSources = async () => (await merged('samples', { type: 'heart_rate' })).map((r) => r.source);
  const sleepSources = async () => (await merged('category-samples', { type: 'sleep_analysis' })).map((r) => r.source);
  const setOrder = async (priorities: Record<string, string[]>) => expectStatus(await put(userId, { priorities }), 200);

  it('ranks by the built-in order before any PUT (Merged view: "then a built-in order per group")', async () => {
    expect(await heartSources()).toEqual(['apple']);
    expect(await sleepSources()).toEqual(['oura']);
  });

  it("lists B's record in the very next merged read after PUT {heart_rate: [B, A]} answered (contracts §6: \"Reads … answered after the PUT's answer already use the new order\")", async () => {
    await setOrder({ heart_rate: ['garmin', 'apple'] });
    const rows = await merged('samples', { type: 'heart_rate' });
    expect(rows.map((r) => [r.source, r.value])).toEqual([['garmin', 64]]);
    // view=all marks the record the merged view lists by the same order.
    const all = await t.call('GET', `/v1/users/${userId}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', view: 'all' } });
    expect((all.json() as { data: Row[] }).data.map((r) => [r.source, r.is_primary_source])).toEqual([
      ['apple', false],
      ['garmin', true],
    ]);
  });

  it('uses the new order in statistics answered right after the PUT (contracts §6: "statistics … already use the new order")', async () => {
    const stats = async () => {
      const res = await t.call('GET', `/v1/users/${userId}/samples/stats`, {
        key: tenant.apiKey,
        query: { type: 'heart_rate', start: '2026-11-20', end: '2026-11-21', view: 'merged' },
      });
      expectStatus(res, 200);
      return (res.json() as { buckets: { source: string }[] }).buckets.map((b) => b.source);
    };
    await setOrder({ heart_rate: ['apple'] });
    expect(await stats()).toEqual(['apple']);
    await setOrder({ heart_rate: ['garmin'] });
    expect(await stats()).toEqual(['garmin']);
  });

  it('the order for the metric beats the order for its group, which beats * (Merged view: "most specific first")', async () => {
    await setOrder({ heart: ['garmin'], '*': ['apple'] });
    expect(await heartSources()).toEqual(['garmin']);
    await setOrder({ heart_rate: ['apple'], heart: ['garmin'], '*': ['garmin'] });
    expect(await heartSources()).toEqual(['apple']);
    await setOrder({ '*': ['garmin'] });
    expect(await heartSources()).toEqual(['garmin']);
    await setOrder({ sleep: ['apple'] });
    expect(await sleepSources()).toEqual(['apple']);
    await setOrder({ sleep_analysis: ['oura'], sleep: ['apple'], '*': ['apple'] });
    expect(await sleepSources()).toEqual(['oura']);
    // An order that names neither source leaves them ranked after every listed one: name order (Merged view: "A source missing from an order ranks after every listed one").
    await setOrder({ heart_rate: ['polar'] });
    expect(await heartSources()).toEqual(['apple']);
  });
});

describe('coverage with view=merged follows the order (contracts §6: "coverage … already use the new order")', () => {
  it('counts the record of the provider whose source the new order ranks first', async () => {
    const userId = (await t.createUser(tenant.apiKey)).id;
    const who = { userId, tenantId: tenant.id };
    const start = '2026-11-19T09:00:00.000Z';
    await ingestSamples(t, who, [
      quantity({ type: 'heart_rate', unit: 'count/min', start_date: start, value: 60, provider: 'device-a', source: 'apple' }),
      quantity({ type: 'heart_rate', unit: 'count/min', start_date: '2026-11-19T09:01:00.000Z', value: 62, provider: 'device-b', source: 'samsung', body_worn: false }),
      // Received after they were measured: not flagged `future` (contracts §15).
    ], '2026-11-20T00:00:00.000Z');
    const counts = async () => {
      const res = await t.call('GET', `/v1/users/${userId}/coverage`, { key: tenant.apiKey, query: { view: 'merged' } });
      expectStatus(res, 200);
      return Object.fromEntries((res.json() as { days: { provider: string; records: number }[] }).days.map((d) => [d.provider, d.records]));
    };
    expect(await counts()).toEqual({ 'device-a': 1, 'device-b': 0 });
    expectStatus(await put(userId, { priorities: { heart: ['samsung'] } }), 200);
    expect(await counts()).toEqual({ 'device-a': 0, 'device-b': 1 });
  });
});
