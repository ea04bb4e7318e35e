import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cycle, daily, ecg, nutrition } from '../../projections/records/fixtures.js';
import { expectProblem, type TenantHandle, type TestApp, type UserBody } from '../../support/server.js';
import { allPages, expectListRefusals, ingest, recordsWorld, served } from './recordsHelper.js';

type Row = { id: number; external_id?: string } & Record<string, unknown>;

let t: TestApp, tenant: TenantHandle, other: TenantHandle, user: UserBody;

const GARMIN = { provider: 'device-b', source: 'garmin', device: 'Forerunner 965', body_worn: true };
const LUNCH = nutrition({ external_id: 'lunch', start_date: '2026-11-01T12:00:00.000Z', end_date: '2026-11-01T12:30:00.000Z' });
const DAY_A = daily({ external_id: 'a-11-01', date: '2026-11-01' });
const ECG_A = ecg({ external_id: 'ecg-a', start_date: '2026-11-01T08:00:00.000Z', end_date: '2026-11-01T08:00:30.000Z' });
const CYCLE_10 = cycle({ external_id: 'c-10', start_date: '2026-10-03', cycle_length_days: null, period_end_date: null, period_length_days: null });

beforeAll(async () => {
  ({ t, tenant, other, user } = await recordsWorld('logs'));
  await ingest(t, tenant.id, user.id, 'nutrition', [
    LUNCH,
    nutrition({ external_id: 'dinner', start_date: '2026-11-01T19:00:00.000Z', end_date: '2026-11-01T19:40:00.000Z', meal_type: 'dinner' }),
    nutrition({ external_id: 'breakfast', start_date: '2026-11-02T07:00:00.000Z', end_date: '2026-11-02T07:15:00.000Z', meal_type: 'breakfast' }),
  ]);
  // The same lunch from another source: nutrition has no merged view, so both are listed.
  await ingest(t, tenant.id, user.id, 'nutrition', [nutrition({ ...GARMIN, source: 'cronometer', external_id: 'cm-lunch', start_date: '2026-11-01T12:00:00.000Z', end_date: '2026-11-01T12:30:00.000Z' })]);
  await ingest(t, tenant.id, user.id, 'daily_summary', [DAY_A, daily({ external_id: 'a-11-03', date: '2026-11-03', steps: 4000 })]);
  await ingest(t, tenant.id, user.id, 'daily_summary', [
    daily({ ...GARMIN, external_id: 'g-11-01', date: '2026-11-01', steps: 11_000 }),
    daily({ ...GARMIN, external_id: 'g-11-02', date: '2026-11-02', steps: 8000 }),
  ]);
  await ingest(t, tenant.id, user.id, 'ecg', [
    ecg({ external_id: 'ecg-b', start_date: '2026-11-01T09:00:00.000Z', end_date: '2026-11-01T09:00:30.000Z' }),
    ECG_A,
    // Same start as ecg-b, stored after it: ordered after it by id.
    ecg({ external_id: 'ecg-c', start_date: '2026-11-01T09:00:00.000Z', end_date: '2026-11-01T09:00:30.000Z', classification: 'inconclusiveLowHeartRate' }),
  ]);
  await ingest(t, tenant.id, user.id, 'menstrual_cycle', [
    cycle({ external_id: 'c-09', start_date: '2026-09-05', cycle_length_days: 28 }),
    CYCLE_10,
  ]);
});
afterAll(async () => {
  await t?.close();
});

const list = async (path: string, query: Record<string, string> = {}) => (await allPages<Row>(t, tenant.apiKey, `/v1/users/${user.id}/${path}`, query)).flatMap((p) => p.data);
const ids = (rows: Row[]) => rows.map((r) => r.external_id);

describe('GET /v1/users/{id}/nutrition (Reads: nutrition — start, end; order start_date)', () => {
  it('answers nutrition logs of every source oldest first; there is no merged view for nutrition (Reads table: no view)', async () => {
    const rows = await list('nutrition');
    expect(ids(rows)).toEqual(['lunch', 'cm-lunch', 'dinner', 'breakfast']);
    expect(ids(await list('nutrition', { view: 'merged' }))).toEqual(['lunch', 'cm-lunch', 'dinner', 'breakfast']);
    expect(rows[0]).toEqual(served(LUNCH));
  });

  it('start and end bound start_date; pages until next_cursor is null; bad window, limit, cursor are 400 (Conventions 1, 2)', async () => {
    expect(ids(await list('nutrition', { start: '2026-11-01T12:00:01Z', end: '2026-11-02T07:00:00Z' }))).toEqual(['dinner']);
    const pages = await allPages<Row>(t, tenant.apiKey, `/v1/users/${user.id}/nutrition`, { limit: '3' });
    expect(pages.map((p) => p.data.length)).toEqual([3, 1]);
    await expectListRefusals(t, tenant.apiKey, `/v1/users/${user.id}/nutrition`);
  });
});

describe('GET /v1/users/{id}/daily (Reads: daily — start, end compared as dates, view; order date)', () => {
  it('merged lists one summary per date: a day total overlaps the whole day, so the better ranked source wins (Merged view: counts; built-in activity order apple before garmin)', async () => {
    expect(ids(await list('daily'))).toEqual(['a-11-01', 'g-11-02', 'a-11-03']);
    const all = await list('daily', { view: 'all' });
    expect(all.map((r) => [r.external_id, r.date, r.is_primary_source])).toEqual([
      ['a-11-01', '2026-11-01', true],
      ['g-11-01', '2026-11-01', false],
      ['g-11-02', '2026-11-02', true],
      ['a-11-03', '2026-11-03', true],
    ]);
    expect(all[0]).toEqual(served(DAY_A, { is_primary_source: true }));
  });

  it('start and end are compared as dates: a time of day counts as its date (Reads: daily)', async () => {
    expect(ids(await list('daily', { view: 'all', start: '2026-11-01T18:00:00Z', end: '2026-11-02T06:00:00Z' }))).toEqual(['a-11-01', 'g-11-01']);
    expect(ids(await list('daily', { start: '2026-11-02', end: '2026-11-03' }))).toEqual(['g-11-02']);
  });

  it('pages until next_cursor is null in both views; bad window, limit, cursor are 400 (Conventions 1, 2)', async () => {
    const merged = await allPages<Row>(t, tenant.apiKey, `/v1/users/${user.id}/daily`, { limit: '2' });
    expect(merged.map((p) => ids(p.data))).toEqual([['a-11-01', 'g-11-02'], ['a-11-03']]);
    const all = await allPages<Row>(t, tenant.apiKey, `/v1/users/${user.id}/daily`, { view: 'all', limit: '3' });
    expect(all.map((p) => p.data.length)).toEqual([3, 1]);
    await expectListRefusals(t, tenant.apiKey, `/v1/users/${user.id}/daily`);
  });
});

describe('GET /v1/users/{id}/ecg (Reads: ecg — start, end bound start_date; order start_date then id; rule 4)', () => {
  it('answers the list form without voltages, ordered by start_date then id (Resources: ECG recording; Reads rule 4)', async () => {
    const rows = await list('ecg');
    expect(rows.map((r) => r.start_date)).toEqual(['2026-11-01T08:00:00.000Z', '2026-11-01T09:00:00.000Z', '2026-11-01T09:00:00.000Z']);
    expect(rows[1]!.id).toBeLessThan(rows[2]!.id);
    expect(rows[2]!.classification).toBe('inconclusiveLowHeartRate');
    expect(rows[0]).toEqual(served(ECG_A, {}, ['external_id', 'voltages']));
  });

  it('start and end bound start_date; pages until next_cursor is null; bad window, limit, cursor are 400', async () => {
    expect((await list('ecg', { start: '2026-11-01T08:00:01Z' })).map((r) => r.classification)).toEqual(['sinusRhythm', 'inconclusiveLowHeartRate']);
    const pages = await allPages<Row>(t, tenant.apiKey, `/v1/users/${user.id}/ecg`, { limit: '2' });
    expect(pages.map((p) => p.data.length)).toEqual([2, 1]);
    await expectListRefusals(t, tenant.apiKey, `/v1/users/${user.id}/ecg`);
  });
});

describe('GET /v1/users/{id}/menstrual-cycles (Reads: start, end compared as dates on the cycle start; order start_date)', () => {
  it('answers cycles oldest first with their period and flow', async () => {
    const rows = await list('menstrual-cycles');
    expect(ids(rows)).toEqual(['c-09', 'c-10']);
    expect(rows[1]).toEqual(served(CYCLE_10));
  });

  it("selects cycles by their start day, start and end compared as dates (a time of day counts as its date)", async () => {
    expect(ids(await list('menstrual-cycles', { start: '2026-10-03T18:00:00Z' }))).toEqual(['c-10']);
    expect(ids(await list('menstrual-cycles', { start: '2026-09-06', end: '2026-10-03T23:00:00Z' }))).toEqual([]);
    expect(ids(await list('menstrual-cycles', { end: '2026-10-04' }))).toEqual(['c-09', 'c-10']);
    await expectListRefusals(t, tenant.apiKey, `/v1/users/${user.id}/menstrual-cycles`);
  });
});

describe('tenant and user checks of these reads (Reads rule 6; Conventions 6)', () => {
  it.each(['nutrition', 'daily', 'ecg', 'menstrual-cycles'])("%s: another tenant's user, an unknown or a deleted user is 404", async (path) => {
    expectProblem(await t.call('GET', `/v1/users/${user.id}/${path}`, { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', `/v1/users/00000000-0000-4000-8000-000000000000/${path}`, { key: tenant.apiKey }), 404);
    const doomed = await t.createUser(tenant.apiKey);
    await t.deleteUser(tenant.apiKey, doomed.id);
    expectProblem(await t.call('GET', `/v1/users/${doomed.id}/${path}`, { key: tenant.apiKey }), 404);
  });
});
