import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';
import { daily, sleepSession } from '../../projections/records/fixtures.js';
import { createJob, ingestRecords, ingestSamples, quantity, rejectLines } from './pipelineFixtures.js';

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;
let userId: string;

type Day = { provider: string; date: string; records: number; metrics: Record<string, number>; last_synced_at: string };
type Coverage = { pending_jobs: number; parked_jobs: number; rejected_records: number; flagged_records: number; truncated: boolean; days: Day[] };

beforeAll(async () => {
  t = await startTestApp();
  // Jobs are made by hand below; the job runner must not run them.
  await t.ctx.jobs.stop();
  tenant = await t.createTenant('coverage-a');
  other = await t.createTenant('coverage-b');
  userId = (await t.createUser(tenant.apiKey)).id;
  const who = { userId, tenantId: tenant.id };
  await ingestSamples(
    t,
    who,
    [
      quantity({ start_date: '2026-11-01T08:00:00.000Z', value: 100 }),
      quantity({ start_date: '2026-11-01T09:00:00.000Z', value: 100 }),
      quantity({ type: 'heart_rate', unit: 'count/min', start_date: '2026-11-01T09:00:00.000Z', value: 60 }),
      quantity({ start_date: '2026-11-02T09:00:00.000Z', value: 100 }),
    ],
    '2026-11-02T10:00:00.000Z',
  );
  await ingestSamples(
    t,
    who,
    [
      // Overlaps the apple steps at 08:00: the merged view hides it.
      quantity({ start_date: '2026-11-01T08:00:30.000Z', value: 5, provider: 'device-b', source: 'samsung', body_worn: false }),
      quantity({ start_date: '2026-11-01T20:00:00.000Z', value: 5, provider: 'device-b', source: 'samsung', body_worn: false }),
    ],
    '2026-11-03T07:00:00.000Z',
  );
  // A later sync of one more apple record on 2026-11-01 moves that day's last_synced_at.
  await ingestSamples(t, who, [quantity({ start_date: '2026-11-01T10:00:00.000Z', value: 1 })], '2026-11-04T00:00:00.000Z');

  await rejectLines(t, who, 'device-a', [{ key: 'k1' }, { key: 'k2' }]);
  // The same bad line sent again (same key) is still one rejected record; another provider's counts too.
  await rejectLines(t, who, 'device-a', [{ key: 'k1', location: '7' }]);
  await rejectLines(t, who, 'device-b', [{ key: 'k3' }]);

  await createJob(t, who, 'device-a', 'pending');
  await createJob(t, who, 'device-a', 'running');
  await createJob(t, who, 'device-b', 'pending');
  await createJob(t, who, 'device-a', 'parked');
  await createJob(t, who, 'device-a', 'done');
});
afterAll(async () => {
  await t?.close();
});

const coverage = async (query: Record<string, string> = {}) => {
  const res = await t.call('GET', `/v1/users/${userId}/coverage`, { key: tenant.apiKey, query });
  expectStatus(res, 200);
  return res.json() as Coverage;
};

describe('GET /v1/users/{id}/coverage (spec Coverage report; Reads rule 3)', () => {
  it('answers pending_jobs, parked_jobs, rejected_records, flagged_records, truncated and days (Coverage report: fields; contracts §15)', async () => {
    const c = await coverage();
    expect(Object.keys(c).sort()).toEqual(['days', 'flagged_records', 'parked_jobs', 'pending_jobs', 'rejected_records', 'truncated']);
    expect(c.truncated).toBe(false);
  });

  it('counts records per provider per day with metrics by type and the latest ingestion, ordered by date then provider (Coverage report: day entry; view all)', async () => {
    const c = await coverage({ view: 'all' });
    expect(c.days).toEqual([
      { provider: 'device-a', date: '2026-11-01', records: 4, metrics: { step_count: 3, heart_rate: 1 }, last_synced_at: '2026-11-04T00:00:00.000Z' },
      { provider: 'device-b', date: '2026-11-01', records: 2, metrics: { step_count: 2 }, last_synced_at: '2026-11-03T07:00:00.000Z' },
      { provider: 'device-a', date: '2026-11-02', records: 1, metrics: { step_count: 1 }, last_synced_at: '2026-11-02T10:00:00.000Z' },
    ]);
  });

  it('with view=merged (default) counts only records the merged view lists (Coverage: view; Merged view)', async () => {
    const c = await coverage();
    const b = c.days.find((d) => d.provider === 'device-b' && d.date === '2026-11-01');
    expect(b).toMatchObject({ records: 1, metrics: { step_count: 1 } });
    const a = c.days.find((d) => d.provider === 'device-a' && d.date === '2026-11-01');
    expect(a).toMatchObject({ records: 4, metrics: { step_count: 3, heart_rate: 1 } });
  });

  it('counts pending and running ETL jobs as pending_jobs and parked ones as parked_jobs, done ones in neither (Coverage report; ETL job)', async () => {
    const c = await coverage();
    expect(c.pending_jobs).toBe(3);
    expect(c.parked_jobs).toBe(1);
  });

  it('counts each rejected line once, every provider, regardless of filters (Coverage report: rejected_records)', async () => {
    expect((await coverage()).rejected_records).toBe(3);
    const filtered = await coverage({ provider: 'device-b', start: '2030-01-01', end: '2030-01-02' });
    expect(filtered.rejected_records).toBe(3);
    expect(filtered.days).toEqual([]);
  });

  it('filters days and jobs by provider (Reads: coverage filter provider)', async () => {
    const c = await coverage({ provider: 'device-b', view: 'all' });
    expect(c.days.map((d) => [d.provider, d.date, d.records])).toEqual([['device-b', '2026-11-01', 2]]);
    expect(c.pending_jobs).toBe(1);
    expect(c.parked_jobs).toBe(0);
  });

  it('selects days by start (inclusive) and end (exclusive), compared as dates (Reads: coverage filters start, end; Conventions 2)', async () => {
    expect((await coverage({ start: '2026-11-02' })).days.map((d) => d.date)).toEqual(['2026-11-02']);
    expect((await coverage({ end: '2026-11-02' })).days.map((d) => d.date)).toEqual(['2026-11-01', '2026-11-01']);
    // An end inside a day keeps that day.
    expect((await coverage({ start: '2026-11-02T12:00:00Z', end: '2026-11-02T13:00:00Z' })).days.map((d) => d.date)).toEqual(['2026-11-02']);
  });

  it('refuses an invalid window (Errors 400: invalid time window)', async () => {
    expectProblem(await t.call('GET', `/v1/users/${userId}/coverage`, { key: tenant.apiKey, query: { start: '2026-11-02', end: '2026-11-01' } }), 400);
    expectProblem(await t.call('GET', `/v1/users/${userId}/coverage`, { key: tenant.apiKey, query: { start: 'nope' } }), 400);
  });

  it("answers 404 for another tenant's user (Reads rule 6)", async () => {
    expectProblem(await t.call('GET', `/v1/users/${userId}/coverage`, { key: other.apiKey }), 404);
  });

  it('answers zeros and no days for a user without data (Coverage report)', async () => {
    const fresh = await t.createUser(tenant.apiKey);
    const res = await t.call('GET', `/v1/users/${fresh.id}/coverage`, { key: tenant.apiKey });
    expectStatus(res, 200);
    expect(res.json()).toEqual({ pending_jobs: 0, parked_jobs: 0, rejected_records: 0, flagged_records: 0, truncated: false, days: [] });
  });
});

describe('GET /v1/users/{id}/coverage over every record kind (spec Coverage report; Merged view)', () => {
  let kindsUser: string;
  const kindsCoverage = async (query: Record<string, string> = {}) => {
    const res = await t.call('GET', `/v1/users/${kindsUser}/coverage`, { key: tenant.apiKey, query });
    expectStatus(res, 200);
    return res.json() as Coverage;
  };

  beforeAll(async () => {
    kindsUser = (await t.createUser(tenant.apiKey)).id;
    const who = { userId: kindsUser, tenantId: tenant.id };
    // The same night from two providers: oura ranks before apple for sleep (built-in order).
    await ingestRecords(t, who, [sleepSession({ external_id: 'n1', provider: 'device-a', source: 'apple' })]);
    await ingestRecords(t, who, [sleepSession({ external_id: 'n2', provider: 'device-b', source: 'oura' })]);
    // The same date's summary from two providers: apple ranks before samsung for activity.
    await ingestRecords(t, who, [daily({ external_id: 'd1', date: '2026-11-01', provider: 'device-a', source: 'apple' })]);
    await ingestRecords(t, who, [daily({ external_id: 'd2', date: '2026-11-01', provider: 'device-b', source: 'samsung', body_worn: false })]);
  });

  it('names other kinds by their collection in metrics and counts every stored record with view=all (Coverage report: metrics)', async () => {
    const c = await kindsCoverage({ view: 'all' });
    expect(c.days.map((d) => [d.date, d.provider, d.records, d.metrics])).toEqual([
      ['2026-11-01', 'device-a', 2, { sleep_sessions: 1, daily_summaries: 1 }],
      ['2026-11-01', 'device-b', 2, { sleep_sessions: 1, daily_summaries: 1 }],
    ]);
  });

  it('with view=merged counts only the sleep session and daily summary the merged view lists (Coverage: view; Merged view: sessions, day totals)', async () => {
    const c = await kindsCoverage();
    expect(c.days.map((d) => [d.date, d.provider, d.records, d.metrics])).toEqual([
      ['2026-11-01', 'device-a', 1, { daily_summaries: 1 }],
      ['2026-11-01', 'device-b', 1, { sleep_sessions: 1 }],
    ]);
    const b = await kindsCoverage({ provider: 'device-b' });
    expect(b.days.map((d) => [d.provider, d.metrics])).toEqual([['device-b', { sleep_sessions: 1 }]]);
  });
});
