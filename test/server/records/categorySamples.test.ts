import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { category } from '../../projections/records/fixtures.js';
import { expectProblem, type TenantHandle, type TestApp, type UserBody } from '../../support/server.js';
import { allPages, APPLE_WATCH, expectListRefusals, ingest, recordsWorld } from './recordsHelper.js';

type Sample = { id: number; external_id: string; type: string; is_primary_source: boolean } & Record<string, unknown>;

let t: TestApp, tenant: TenantHandle, other: TenantHandle, user: UserBody;

const DEVICE_B = { provider: 'device-b', device: null, body_worn: false };

beforeAll(async () => {
  ({ t, tenant, other, user } = await recordsWorld('category'));
  await ingest(t, tenant.id, user.id, 'category', [
    category({ external_id: 'a1', start_date: '2026-11-01T23:00:00.000Z', end_date: '2026-11-01T23:30:00.000Z' }),
    category({ external_id: 'a2', value: 'asleep_rem', start_date: '2026-11-02T01:00:00.000Z', end_date: '2026-11-02T01:30:00.000Z' }),
    category({ external_id: 'm1', type: 'mindful_session', value: 'not_applicable', start_date: '2026-11-01T23:05:00.000Z', end_date: '2026-11-01T23:15:00.000Z' }),
  ]);
  await ingest(t, tenant.id, user.id, 'category', [
    // Overlaps apple's a1; oura ranks before apple in the sleep group.
    category({ ...DEVICE_B, source: 'oura', body_worn: true, external_id: 'o1', start_date: '2026-11-01T23:10:00.000Z', end_date: '2026-11-01T23:40:00.000Z' }),
    // Overlaps apple's m1; neither source is in the (empty) built-in order of the other group.
    category({ ...DEVICE_B, source: 'calm', external_id: 'm2', type: 'mindful_session', value: 'not_applicable', start_date: '2026-11-01T23:10:00.000Z', end_date: '2026-11-01T23:20:00.000Z' }),
  ]);
});
afterAll(async () => {
  await t?.close();
});

const url = (u = user.id) => `/v1/users/${u}/category-samples`;
const list = async (query: Record<string, string> = {}) => (await allPages<Sample>(t, tenant.apiKey, url(), query)).flatMap((p) => p.data);
const ids = (s: Sample[]) => s.map((x) => x.external_id);

describe('GET /v1/users/{id}/category-samples (Reads: category-samples — type optional, start, end, view; order start_date)', () => {
  it('answers category samples with their canonical type and value plus provenance', async () => {
    const [m1] = await list({ type: 'mindful_session' });
    expect(m1).toEqual({
      id: expect.any(Number),
      type: 'mindful_session',
      value: 'not_applicable',
      start_date: '2026-11-01T23:05:00.000Z',
      end_date: '2026-11-01T23:15:00.000Z',
      source_name: 'Apple Watch',
      source_bundle_id: 'com.apple.health.1A2B',
      device_model: 'Watch',
      product_type: 'Watch7,1',
      external_id: 'm1',
      is_primary_source: true,
      was_user_entered: false,
      metadata: { HKTimeZone: 'Europe/Berlin' },
      ...APPLE_WATCH,
      quality: [],
    });
  });

  it('without type lists every type oldest first (start_date, then id); merged compares only samples of the same type (Merged view: anything else — intervals overlap)', async () => {
    // a1 is hidden by oura's overlapping o1 (sleep group: oura before apple); m1 overlaps o1 too
    // but is another type, so it stays.
    expect(ids(await list())).toEqual(['m1', 'o1', 'a2']);
    expect((await list({ view: 'all' })).map((s) => [s.external_id, s.is_primary_source])).toEqual([
      ['a1', false],
      ['m1', true],
      ['o1', true],
      ['m2', false],
      ['a2', true],
    ]);
  });

  it('type=sleep_analysis ranks by the sleep group; other types by the other group, whose ties between unlisted sources go by source name (Merged view: ranking)', async () => {
    expect(ids(await list({ type: 'sleep_analysis' }))).toEqual(['o1', 'a2']);
    expect(ids(await list({ type: 'sleep_analysis', view: 'all' }))).toEqual(['a1', 'o1', 'a2']);
    expect(ids(await list({ type: 'mindful_session' }))).toEqual(['m1']);
    expect(ids(await list({ type: 'mindful_session', view: 'all' }))).toEqual(['m1', 'm2']);
    expect(ids(await list({ type: 'menstrual_flow' }))).toEqual([]);
  });

  it('start (inclusive) and end (exclusive) bound start_date (Conventions 2)', async () => {
    expect(ids(await list({ view: 'all', start: '2026-11-01T23:05:00Z', end: '2026-11-02T01:00:00Z' }))).toEqual(['m1', 'o1', 'm2']);
    expect(ids(await list({ start: '2026-11-02' }))).toEqual(['a2']);
  });

  it('pages across pages until next_cursor is null, skipping hidden samples in the merged view (Conventions 1)', async () => {
    const merged = await allPages<Sample>(t, tenant.apiKey, url(), { limit: '1' });
    expect(merged.map((p) => ids(p.data))).toEqual([['m1'], ['o1'], ['a2']]);
    const all = await allPages<Sample>(t, tenant.apiKey, url(), { view: 'all', limit: '2' });
    expect(all.map((p) => ids(p.data))).toEqual([['a1', 'm1'], ['o1', 'm2'], ['a2']]);
  });

  it('refuses a bad window, limit or cursor with 400 (Conventions 1, 2; Errors 2)', async () => {
    await expectListRefusals(t, tenant.apiKey, url());
  });

  it("another tenant's user and an unknown user are 404 (Reads rule 6)", async () => {
    expectProblem(await t.call('GET', url(), { key: other.apiKey }), 404);
    expectProblem(await t.call('GET', url('00000000-0000-4000-8000-000000000000'), { key: tenant.apiKey }), 404);
  });
});
