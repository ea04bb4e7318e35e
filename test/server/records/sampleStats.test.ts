import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';
import { ingestSamples, quantity } from './pipelineFixtures.js';

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let userId: string;

type Bucket = { start: string; provider: string; source: string; unit: string; count: number; sum: number; avg: number; min: number; max: number };
type Stats = { type: string; interval: string; tz: string; view: string; start: string; end: string; truncated: boolean; buckets: Bucket[] };

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('stats-a');
  other = await t.createTenant('stats-b');
  userId = (await t.createUser(tenant.apiKey)).id;
  const who = { userId, tenantId: tenant.id };
  await ingestSamples(t, who, [
    // Berlin day 2026-11-01 runs 2026-10-31T23:00Z .. 2026-11-01T23:00Z.
    quantity({ start_date: '2026-10-31T23:30:00.000Z', value: 100 }),
    quantity({ start_date: '2026-11-01T12:00:00.000Z', value: 300 }),
    quantity({ start_date: '2026-11-01T23:10:00.000Z', value: 40 }),
    // Same provider, other source: its own series.
    quantity({ start_date: '2026-11-01T15:00:00.000Z', value: 7, source: 'garmin' }),
    // Another provider, overlapping the apple record at 12:00: hidden in the merged view.
    quantity({ start_date: '2026-11-01T12:00:30.000Z', value: 999, provider: 'device-b', source: 'samsung', body_worn: false }),
    quantity({ start_date: '2026-11-01T18:00:00.000Z', value: 11, provider: 'device-b', source: 'samsung', body_worn: false }),
    // Heart rate readings, and a type outside the catalog this user has.
    quantity({ type: 'heart_rate', unit: 'count/min', start_date: '2026-11-01T08:00:00.000Z', value: 60 }),
    quantity({ type: 'heart_rate', unit: 'count/min', start_date: '2026-11-01T08:30:00.000Z', value: 80 }),
    quantity({ type: 'custom_metric', unit: 'count', start_date: '2026-11-01T08:00:00.000Z', value: 3 }),
  ]);
});
afterAll(async () => {
  await t?.close();
});

const stats = (query: Record<string, string>, key = tenant.apiKey, user = userId) => t.call('GET', `/v1/users/${user}/samples/stats`, { key, query });
const ok = async (query: Record<string, string>) => {
  const res = await stats(query);
  expectStatus(res, 200);
  return res.json() as Stats;
};

describe('GET /v1/users/{id}/samples/stats: refusals (spec Reads rule 2; Errors 400)', () => {
  it('needs type, start and end (Reads: samples/stats "type, start, end (required)")', async () => {
    expectProblem(await stats({ start: '2026-11-01', end: '2026-11-02' }), 400);
    expectProblem(await stats({ type: 'step_count', end: '2026-11-02' }), 400);
    expectProblem(await stats({ type: 'step_count', start: '2026-11-01' }), 400);
  });

  it('refuses a type outside the quantity catalog the user has no samples of, and serves one the user has (Reads rules 1 and 2; Errors 400)', async () => {
    const res = await stats({ type: 'not_a_type', start: '2026-11-01', end: '2026-11-02' });
    expect(expectProblem(res, 400).detail).toMatch(/catalog/);
    const own = await ok({ type: 'custom_metric', start: '2026-11-01', end: '2026-11-02' });
    expect(own.buckets.map((b) => b.sum)).toEqual([3]);
  });

  it('refuses a tz that is not an IANA zone (Reads rule 2: "tz is an IANA zone")', async () => {
    expect(expectProblem(await stats({ type: 'step_count', start: '2026-11-01', end: '2026-11-02', tz: 'Mars/Olympus' }), 400).detail).toMatch(/IANA/);
    expectProblem(await stats({ type: 'step_count', start: '2026-11-01', end: '2026-11-02', tz: '+01:00' }), 400);
  });

  it('refuses an interval other than hour or day (Reads rule 2)', async () => {
    expectProblem(await stats({ type: 'step_count', start: '2026-11-01', end: '2026-11-02', interval: 'week' }), 400);
  });

  it('refuses more than 10000 intervals after start, and accepts exactly 10000 (Reads rule 2; Limits: statistics span)', async () => {
    expectProblem(await stats({ type: 'step_count', start: '2026-01-01T00:00:00Z', end: '2027-02-21T16:00:01Z', interval: 'hour' }), 400);
    expectStatus(await stats({ type: 'step_count', start: '2026-01-01T00:00:00Z', end: '2027-02-21T16:00:00Z', interval: 'hour' }), 200);
    expectProblem(await stats({ type: 'step_count', start: '2000-01-01', end: '2027-05-20' }), 400);
  });

  it('refuses an invalid time and end before start (Conventions 2; Errors 400: invalid time window)', async () => {
    expectProblem(await stats({ type: 'step_count', start: 'soon', end: '2026-11-02' }), 400);
    expectProblem(await stats({ type: 'step_count', start: '2026-11-02', end: '2026-11-01' }), 400);
  });

  it("answers 404 for another tenant's user (Reads rule 6; Conventions 6)", async () => {
    expectProblem(await stats({ type: 'step_count', start: '2026-11-01', end: '2026-11-02' }, other.apiKey), 404);
  });
});

describe('GET /v1/users/{id}/samples/stats: answers (spec Sample statistics; Reads rule 2)', () => {
  it('answers type, interval, tz, view, widened start and end with the offset of tz, truncated and buckets (Sample statistics: response fields)', async () => {
    const s = await ok({ type: 'step_count', start: '2026-11-01T10:00:00+01:00', end: '2026-11-01T20:00:00+01:00', tz: 'Europe/Berlin' });
    expect(Object.keys(s).sort()).toEqual(['buckets', 'end', 'interval', 'start', 'truncated', 'type', 'tz', 'view']);
    expect(s).toMatchObject({ type: 'step_count', interval: 'day', tz: 'Europe/Berlin', view: 'merged', truncated: false });
    expect(s.start).toBe('2026-11-01T00:00:00+01:00');
    expect(s.end).toBe('2026-11-02T00:00:00+01:00');
  });

  it('buckets by local day in tz, one series per provider, source and unit, ordered by start, provider, source, unit (Reads rule 2; Reads order)', async () => {
    const s = await ok({ type: 'step_count', start: '2026-11-01', end: '2026-11-03', tz: 'Europe/Berlin' });
    expect(s.buckets).toEqual([
      { start: '2026-11-01T00:00:00+01:00', provider: 'device-a', source: 'apple', unit: 'count', count: 2, sum: 400, avg: 200, min: 100, max: 300 },
      { start: '2026-11-01T00:00:00+01:00', provider: 'device-a', source: 'garmin', unit: 'count', count: 1, sum: 7, avg: 7, min: 7, max: 7 },
      { start: '2026-11-01T00:00:00+01:00', provider: 'device-b', source: 'samsung', unit: 'count', count: 1, sum: 11, avg: 11, min: 11, max: 11 },
      { start: '2026-11-02T00:00:00+01:00', provider: 'device-a', source: 'apple', unit: 'count', count: 1, sum: 40, avg: 40, min: 40, max: 40 },
    ]);
  });

  it('uses UTC days by default, written with +00:00 (Reads rule 2: tz default UTC)', async () => {
    const s = await ok({ type: 'step_count', start: '2026-11-01', end: '2026-11-02', view: 'all' });
    expect(s.tz).toBe('UTC');
    expect(s.start).toBe('2026-11-01T00:00:00+00:00');
    expect(s.buckets.map((b) => [b.start, b.provider, b.source, b.sum])).toEqual([
      ['2026-11-01T00:00:00+00:00', 'device-a', 'apple', 340],
      ['2026-11-01T00:00:00+00:00', 'device-a', 'garmin', 7],
      ['2026-11-01T00:00:00+00:00', 'device-b', 'samsung', 1010],
    ]);
  });

  it('lists what the merged view hides only with view=all (Merged view; Reads: samples/stats view)', async () => {
    const merged = await ok({ type: 'step_count', start: '2026-11-01', end: '2026-11-02', provider: 'device-b' });
    expect(merged.buckets.map((b) => b.sum)).toEqual([11]);
    const all = await ok({ type: 'step_count', start: '2026-11-01', end: '2026-11-02', provider: 'device-b', view: 'all' });
    expect(all.view).toBe('all');
    expect(all.buckets.map((b) => [b.count, b.sum, b.min, b.max])).toEqual([[2, 1010, 11, 999]]);
  });

  it('filters by provider (Reads: samples/stats filter provider)', async () => {
    const s = await ok({ type: 'step_count', start: '2026-11-01', end: '2026-11-03', provider: 'device-a', tz: 'Europe/Berlin' });
    expect(new Set(s.buckets.map((b) => b.provider))).toEqual(new Set(['device-a']));
  });

  it('buckets by hour with the offset of tz and averages readings (Reads rule 2: interval hour)', async () => {
    const s = await ok({ type: 'heart_rate', start: '2026-11-01T09:00:00+01:00', end: '2026-11-01T09:59:00+01:00', interval: 'hour', tz: 'Europe/Berlin' });
    expect(s.start).toBe('2026-11-01T09:00:00+01:00');
    expect(s.end).toBe('2026-11-01T10:00:00+01:00');
    expect(s.buckets).toEqual([{ start: '2026-11-01T09:00:00+01:00', provider: 'device-a', source: 'apple', unit: 'count/min', count: 2, sum: 140, avg: 70, min: 60, max: 80 }]);
  });

  it('writes the offset each instant has: 23-hour spring day in Europe/Berlin ends at +02:00 (Reads rule 2: DST days)', async () => {
    const s = await ok({ type: 'step_count', start: '2026-03-29', end: '2026-03-30', tz: 'Europe/Berlin' });
    expect(s.start).toBe('2026-03-29T00:00:00+01:00');
    expect(s.end).toBe('2026-03-30T00:00:00+02:00');
    expect(s.buckets).toEqual([]);
  });
});
