import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordProjections } from '../../../projections/index.js';
import { etlJobsProjection, jobPhase, type EtlJobStatus } from '../../../projections/ingestion/etlJobsProjection.js';
import { freshnessState, getFreshness, LOOKBACK_DAYS, STALE_AFTER_MS, type ProviderFacts } from '../../../queries/users/getFreshness.js';
import type { SampleDoc } from '../../../projections/records/samplesProjection.js';
import type { Doc } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { blockChanges } from '../../support/sampleBlockStores.js';
import { tempDir } from '../../support/tmp.js';

/**
 * contracts §6 "freshness", the rules without HTTP: the state's order, the 48-hour staleness, the
 * end of the latest record, and which jobs count. docs/freshness.md.
 */

const U = '11111111-1111-4111-8111-111111111111';
let store: SqliteReadStore;
let n = 0;

const job = (over: Partial<Doc> & { provider: string; status: string }): Doc => ({
  _id: `upload-${++n}`,
  id: n,
  user_id: U,
  tenant_id: 't',
  tier: 'upload',
  tier_priority: 0,
  attempts: 0,
  error: null,
  created_at: '2026-11-10T00:00:00.000Z',
  next_attempt_at: null,
  lease_until: null,
  finished_at: null,
  records: null,
  last_day: null,
  ...over,
  // As the projection writes it: the indexes by user hold the status's class.
  phase: jobPhase(over.status as EtlJobStatus),
});
const record = (collection: string, provider: string, fields: Record<string, unknown>, day: string): { collection: string; doc: Doc } => ({
  collection,
  doc: { _id: `${collection}-${++n}`, id: n, user_id: U, tenant_id: 't', provider, source: 'apple', body_worn: true, ingested_at: '2026-11-10T00:00:00.000Z', day, ...fields },
});

/** A quantity sample row as the samples projection's blocks hold it (its day: the UTC date of its start). */
const sample = (provider: string, fields: { type: string; start_date: string; end_date: string }): SampleDoc =>
  record('samples', provider, fields, fields.start_date.slice(0, 10)).doc as unknown as SampleDoc;

beforeAll(async () => {
  store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
  await store.ensureCollections([...etlJobsProjection.collections, ...recordProjections.flatMap((p) => p.collections)]);
  const puts = [
    // device-a: two uploads that stored records (the later one reaches 2026-11-10), one that stored none.
    { collection: 'etl_jobs', doc: job({ provider: 'device-a', status: 'done', finished_at: '2026-11-09T12:00:00.000Z', records: { quantity: 3 }, last_day: '2026-11-09' }) },
    { collection: 'etl_jobs', doc: job({ provider: 'device-a', status: 'done', finished_at: '2026-11-10T12:00:00.000Z', records: { quantity: 1 }, last_day: '2026-11-10' }) },
    { collection: 'etl_jobs', doc: job({ provider: 'device-a', status: 'done', finished_at: '2026-11-11T12:00:00.000Z', records: {}, last_day: null }) },
    // device-b: one upload whose job was discarded (done, nothing stored), one in backoff after a failure.
    { collection: 'etl_jobs', doc: job({ provider: 'device-b', status: 'done', finished_at: '2026-11-10T00:00:00.000Z', error: 'user deleted' }) },
    { collection: 'etl_jobs', doc: job({ provider: 'device-b', status: 'pending', attempts: 2, error: 'boom', next_attempt_at: '2026-11-12T00:00:00.000Z' }) },
    // device-c: every upload finished without storing a record: no entry.
    { collection: 'etl_jobs', doc: job({ provider: 'device-c', status: 'done', finished_at: '2026-11-10T00:00:00.000Z', records: {} }) },
    // Another user's job.
    { collection: 'etl_jobs', doc: job({ provider: 'device-a', status: 'parked', user_id: 'someone-else', error: 'x' }) },
    // device-a records: the latest end is the sleep session's, which started on the 9th.
    record('sleep_sessions', 'device-a', { bedtime_start: '2026-11-09T22:00:00.000Z', bedtime_end: '2026-11-10T07:30:00.000Z' }, '2026-11-09'),
    record('workouts', 'device-a', { type: 'running', start_date: '2026-11-10T05:00:00.000Z', end_date: '2026-11-10T05:45:00.000Z' }, '2026-11-10'),
    // Older than the lookback from the last day: not looked at even with a later end.
    record('category_samples', 'device-a', { type: 'mindful_session', start_date: '2026-11-01T00:00:00.000Z', end_date: '2026-11-30T00:00:00.000Z' }, '2026-11-01'),
    // A daily summary ends at the next midnight: not a measure of how far data reaches.
    record('daily_summaries', 'device-a', { date: '2026-11-10', day_start: '2026-11-10T00:00:00.000Z' }, '2026-11-10'),
  ];
  await store.applyChanges(puts.map((p) => ({ op: 'put' as const, collection: p.collection, doc: p.doc })));
  // Quantity samples are stored in blocks (issue 38); the second is another provider's later record, which does not count for device-a.
  await store.applyChanges(
    blockChanges([
      sample('device-a', { type: 'heart_rate', start_date: '2026-11-10T06:00:00.000Z', end_date: '2026-11-10T06:00:00.000Z' }),
      sample('device-b', { type: 'heart_rate', start_date: '2026-11-10T09:00:00.000Z', end_date: '2026-11-10T09:00:00.000Z' }),
    ]),
  );
});
afterAll(async () => {
  await store?.close();
});

const at = (iso: string) => ({ now: new Date(iso) });

describe('getFreshness (contracts §6)', () => {
  it('synced_through is the latest end among the provider records of its last day with data and the days before; lag is now minus it in whole seconds', async () => {
    const [a] = await getFreshness(store, U, at('2026-11-10T08:00:00.500Z'));
    expect(a).toMatchObject({ provider: 'device-a', kind: 'device', synced_through: '2026-11-10T07:30:00.000Z', lag_seconds: 1800 });
    expect(LOOKBACK_DAYS).toBe(2);
  });

  it('synced_through never passes when the data was received: a record of a period still running (a day of steps) covers the user only up to then', async () => {
    const V = '33333333-3333-4333-8333-333333333333';
    await store.applyChanges([
      { op: 'put', collection: 'etl_jobs', doc: job({ provider: 'oura', status: 'done', user_id: V, finished_at: '2026-11-10T12:00:00.000Z', records: { quantity: 1 }, last_day: '2026-11-10' }) },
      ...blockChanges([{ ...sample('oura', { type: 'steps', start_date: '2026-11-10T02:00:00.000Z', end_date: '2026-11-11T02:00:00.000Z' }), user_id: V }]),
    ]);
    const [o] = await getFreshness(store, V, at('2026-11-10T13:00:00.000Z'));
    expect(o).toMatchObject({ provider: 'oura', synced_through: '2026-11-10T12:00:00.000Z', last_received_at: '2026-11-10T12:00:00.000Z', lag_seconds: 3600 });
  });

  it('last_received_at is the finish of the latest job that stored records (contracts §6: "last upload … that stored data")', async () => {
    const [a] = await getFreshness(store, U, at('2026-11-11T13:00:00.000Z'));
    expect(a!.last_received_at).toBe('2026-11-10T12:00:00.000Z');
  });

  it('is fresh within 48 hours of the last data received and stale from then on (contracts §6: stale, "nothing received for 48 hours")', async () => {
    const last = Date.parse('2026-11-10T12:00:00.000Z');
    expect((await getFreshness(store, U, { now: new Date(last + STALE_AFTER_MS - 1) }))[0]!.state).toBe('fresh');
    expect((await getFreshness(store, U, { now: new Date(last + STALE_AFTER_MS) }))[0]!.state).toBe('stale');
    expect(STALE_AFTER_MS).toBe(48 * 3_600_000);
  });

  it('lists providers with stored data or an open job, failing for a job waiting for its retry, with its error; none for a provider whose uploads stored nothing', async () => {
    const entries = await getFreshness(store, U, at('2026-11-11T00:00:00.000Z'));
    expect(entries.map((e) => e.provider)).toEqual(['device-a', 'device-b']);
    expect(entries[1]).toEqual({
      provider: 'device-b',
      kind: 'device',
      state: 'failing',
      synced_through: null,
      lag_seconds: null,
      last_received_at: null,
      last_notification_at: null,
      next_pull_at: null,
      last_error: 'boom',
    });
    expect(entries[0]!.last_error).toBeNull();
  });

  it('answers no entries for a user without jobs', async () => {
    expect(await getFreshness(store, '22222222-2222-4222-8222-222222222222')).toEqual([]);
  });

  it('takes connections into account: their providers get entries, and their status comes first (contracts §6: disconnected, needs_reauth)', async () => {
    const entries = await getFreshness(store, U, {
      now: new Date('2026-11-10T13:00:00.000Z'),
      connections: [
        { provider: 'device-a', status: 'needs_reauth', last_notification_at: null, next_pull_at: null },
        { provider: 'oura', status: 'active', last_notification_at: null, next_pull_at: '2026-11-10T14:00:00.000Z' },
      ],
    });
    expect(entries.map((e) => [e.provider, e.kind, e.state, e.next_pull_at])).toEqual([
      ['device-a', 'device', 'needs_reauth', null],
      ['device-b', 'device', 'failing', null],
      ['oura', 'oauth', 'stale', '2026-11-10T14:00:00.000Z'],
    ]);
  });
});

describe('freshnessState: the first rule that holds (contracts §6)', () => {
  const now = Date.parse('2026-11-10T12:00:00.000Z');
  const healthy: ProviderFacts = { connection: 'active', syncing: false, failing: false, lastReceivedAt: '2026-11-10T11:00:00.000Z' };
  it('orders disconnected, needs_reauth, syncing, failing, stale, fresh', () => {
    const all: ProviderFacts = { connection: 'disconnected', syncing: true, failing: true, lastReceivedAt: null };
    expect(freshnessState(all, now)).toBe('disconnected');
    expect(freshnessState({ ...all, connection: 'needs_reauth' }, now)).toBe('needs_reauth');
    expect(freshnessState({ ...all, connection: 'active' }, now)).toBe('syncing');
    expect(freshnessState({ ...all, connection: null, syncing: false }, now)).toBe('failing');
    expect(freshnessState({ ...all, connection: null, syncing: false, failing: false }, now)).toBe('stale');
    expect(freshnessState(healthy, now)).toBe('fresh');
    expect(freshnessState({ ...healthy, connection: null }, now)).toBe('fresh');
  });
});
