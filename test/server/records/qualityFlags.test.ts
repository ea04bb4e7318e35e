import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest, recordsWorld, type RecordsWorld } from './recordsHelper.js';
import { expectStatus } from '../../support/server.js';
import { postUpload, requestFor, waitForEtl } from '../../ingest/uploadHelpers.js';
import { daily, sleepSession, workout } from '../../projections/records/fixtures.js';

/**
 * Contracts §15 end to end: a device-a upload through the real route and ETL (the flags are set on
 * the way to the log and carried by the events), and records of the other kinds appended as events
 * stored before the flags existed (flagged when projected). Read back through REST, statistics,
 * coverage and FHIR.
 */
let w: RecordsWorld;
const WATCH = { source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.1A2B', device_model: 'Watch', product_type: 'Watch7,1' };
const hr = (uuid: string, value: number, at: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ kind: 'quantity', uuid, type: 'HKQuantityTypeIdentifierHeartRate', value, unit: 'count/min', start_date: at, end_date: at, ...WATCH, was_user_entered: false, metadata: { HKTimeZone: 'UTC' }, ...extra });
// Received now: one reading two hours ahead of the receipt is `future` (within the day the bounds allow).
const soon = new Date(Date.now() + 2 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

beforeAll(async () => {
  w = await recordsWorld('quality');
  const lines = [
    hr('Q0000000-0000-4000-8000-000000000001', 72, '2026-11-01T08:00:00Z'),
    hr('Q0000000-0000-4000-8000-000000000002', 300, '2026-11-01T09:00:00Z'),
    hr('Q0000000-0000-4000-8000-000000000003', 64, '2026-11-01T10:00:00Z', { was_user_entered: true }),
    hr('Q0000000-0000-4000-8000-000000000004', 70, soon),
  ];
  const token = (await w.t.mintToken(w.tenant.apiKey, w.user.id, { scopes: ['upload'] })).token;
  const res = await postUpload(w.t, 'device-a', token, 'quality-1', requestFor('device-a', gzipSync(lines.join('\n') + '\n')));
  expect(res.statusCode).toBe(202);
  await waitForEtl(w.t, w.tenant.apiKey, w.user.id);
  // Events without flags (as stored before them): flagged when projected, against their receipt.
  await ingest(w.t, w.tenant.id, w.user.id, 'sleep_session', [sleepSession({ external_id: 'long-night', bedtime_start: '2026-11-01T20:00:00.000Z', bedtime_end: '2026-11-02T14:00:00.000Z', phases: [] })]);
  await ingest(w.t, w.tenant.id, w.user.id, 'workout', [workout({ external_id: 'day-long', start_date: '2026-10-30T06:00:00.000Z', end_date: '2026-10-31T08:00:00.000Z', route: [] })]);
  await ingest(w.t, w.tenant.id, w.user.id, 'daily_summary', [daily({ external_id: 'd-ok', date: '2026-11-01' }), daily({ external_id: 'd-ahead', date: '2026-11-09' })]);
}, 60_000);
afterAll(async () => {
  await w?.t.close();
});

const get = async (path: string, query: Record<string, string> = {}) => {
  const res = await w.t.call('GET', `/v1/users/${w.user.id}/${path}`, { key: w.tenant.apiKey, query });
  expectStatus(res, 200);
  return res.json() as { data: Record<string, unknown>[] } & Record<string, unknown>;
};
const flagsById = (rows: Record<string, unknown>[]) => Object.fromEntries(rows.map((r) => [r.external_id as string, r.quality]));

describe('data quality flags through the API (contracts §15)', () => {
  it('every sample answers its flags, set by the ETL from the upload: implausible_value, manual, future; empty when none (contracts §15)', async () => {
    const all = await get('samples', { type: 'heart_rate', view: 'all', end: '2027-01-01' });
    expect(flagsById(all.data)).toEqual({
      'Q0000000-0000-4000-8000-000000000001': [],
      'Q0000000-0000-4000-8000-000000000002': ['implausible_value'],
      'Q0000000-0000-4000-8000-000000000003': ['manual'],
      'Q0000000-0000-4000-8000-000000000004': ['future'],
    });
    // The events carry the flags: what the ETL appended is what the projection stored.
    const events = await w.t.ctx.eventStore.readAll({ filter: { eventTypes: ['samples.ingested'] } });
    const stored = events.flatMap((e) => (e.data as { records: { external_id: string; quality?: string[] }[] }).records);
    expect(stored.find((r) => r.external_id === 'Q0000000-0000-4000-8000-000000000002')?.quality).toEqual(['implausible_value']);
  });

  it('the merged view leaves out implausible and future records, keeps manual ones; view=all lists them with is_primary_source false (contracts §15)', async () => {
    const merged = await get('samples', { type: 'heart_rate', end: '2027-01-01' });
    expect(merged.data.map((r) => r.external_id)).toEqual(['Q0000000-0000-4000-8000-000000000001', 'Q0000000-0000-4000-8000-000000000003']);
    const all = await get('samples', { type: 'heart_rate', view: 'all', end: '2027-01-01' });
    expect(all.data.filter((r) => r.is_primary_source === false).map((r) => r.external_id).sort()).toEqual(['Q0000000-0000-4000-8000-000000000002', 'Q0000000-0000-4000-8000-000000000004']);
  });

  it('statistics of both views leave flagged samples out (contracts §15)', async () => {
    for (const view of ['all', 'merged']) {
      const stats = await get('samples/stats', { type: 'heart_rate', start: '2026-11-01', end: '2026-11-02', interval: 'day', tz: 'UTC', view });
      expect((stats as unknown as { buckets: { count: number; max: number }[] }).buckets.map((b) => [b.count, b.max]), view).toEqual([[2, 72]]);
    }
  });

  it('sleep sessions over 16 h and workouts over 24 h are implausible_duration, left out of the merged view; a summary of a day not yet begun is future (contracts §15)', async () => {
    expect(flagsById((await get('sleep', { view: 'all' })).data)).toEqual({ 'long-night': ['implausible_duration'] });
    expect((await get('sleep')).data).toEqual([]);
    expect(flagsById((await get('workouts', { view: 'all' })).data)).toEqual({ 'day-long': ['implausible_duration'] });
    expect((await get('workouts')).data).toEqual([]);
    expect(flagsById((await get('daily', { view: 'all' })).data)).toEqual({ 'd-ok': [], 'd-ahead': ['future'] });
    expect((await get('daily')).data.map((r) => r.external_id)).toEqual(['d-ok']);
  });

  it('coverage counts flagged records in flagged_records over every kind, counts them per day with view=all and not with merged (contracts §15)', async () => {
    const all = await w.t.call('GET', `/v1/users/${w.user.id}/coverage`, { key: w.tenant.apiKey, query: { view: 'all', start: '2026-11-01', end: '2026-11-02' } });
    const c = all.json() as { flagged_records: number; days: { provider: string; date: string; metrics: Record<string, number> }[] };
    // The implausible and the future heart rate, the long night, the long workout, the summary ahead: whatever the window.
    expect(c.flagged_records).toBe(5);
    expect(c.days.find((d) => d.provider === 'device-a' && d.date === '2026-11-01')?.metrics.heart_rate).toBe(3);
    const merged = (await w.t.call('GET', `/v1/users/${w.user.id}/coverage`, { key: w.tenant.apiKey, query: { view: 'merged', start: '2026-11-01', end: '2026-11-02' } })).json() as typeof c;
    expect(merged.flagged_records).toBe(5);
    expect(merged.days.find((d) => d.provider === 'device-a' && d.date === '2026-11-01')?.metrics.heart_rate).toBe(2);
  });

  it('FHIR carries the flags as meta.tag codings of urn:wellstream:quality, beside the vital-signs profile (contracts §15; docs/fhir.md)', async () => {
    const res = await w.t.call('GET', `/v1/users/${w.user.id}/fhir/Observation`, { key: w.tenant.apiKey, query: { code: '8867-4', view: 'all' } });
    expectStatus(res, 200);
    const bundle = res.json() as { entry: { resource: { valueQuantity: { value: number }; meta?: { profile?: string[]; tag?: { system: string; code: string }[] } } }[] };
    const byValue = Object.fromEntries(bundle.entry.map((e) => [e.resource.valueQuantity.value, e.resource.meta]));
    expect(byValue[300]).toEqual({ profile: ['http://hl7.org/fhir/StructureDefinition/heartrate'], tag: [{ system: 'urn:wellstream:quality', code: 'implausible_value', display: expect.any(String) }] });
    expect(byValue[72]).toEqual({ profile: ['http://hl7.org/fhir/StructureDefinition/heartrate'] });
  });
});
