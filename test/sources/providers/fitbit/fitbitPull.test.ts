import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { fitbitConnector } from '../../../../src/sources/providers/fitbit/pull.js';
import { ProviderCallError } from '../../../../src/sources/shared/oauthClient.js';
import type { Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { grantedSandbox, parseAll, runPull, sandboxGrant } from '../../shared/sandboxPull.js';

/**
 * Fitbit pulled from the sandbox over HTTP (issue 11 "Connectors for real providers" and
 * "Provider sandbox"): real OAuth, the profile's zone read first, per-day intraday and summary
 * calls, range calls, the activity list paged by `pagination.next`, every payload decoded, a
 * repeated pull identical, refusals and the hourly rate limit classed for the sync engine.
 */
const NOW = new Date('2026-11-23T10:00:00.000Z');
// Local days 2026-11-16 .. 2026-11-22 in Paris (UTC+1 in November).
const WINDOW = { start: new Date('2026-11-15T23:00:00.000Z'), end: new Date('2026-11-22T23:00:00.000Z') };

let sandbox: Sandbox, token: string;
beforeAll(async () => {
  ({ sandbox, token } = await grantedSandbox(fitbitConnector, NOW));
});
afterAll(async () => {
  await sandbox?.close();
});

const ofKind = <K extends NormalizedRecord['kind']>(records: NormalizedRecord[], kind: K) => records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);

describe('Fitbit pull', () => {
  it('pulls a week of every data type (per local day, by range, paged activity logs) and decodes it all in the profile’s zone', async () => {
    const { payloads } = await runPull(sandbox, fitbitConnector, { accessToken: token, window: WINDOW });
    expect(new Set(payloads.map((p) => p.dataType))).toEqual(new Set(fitbitConnector.descriptor.dataTypes));
    // One call per local day for the day-based endpoints.
    expect(payloads.filter((p) => p.dataType === 'heart_intraday').map((p) => p.ref)).toEqual(
      ['16', '17', '18', '19', '20', '21', '22'].map((d) => `/1/user/-/activities/heart/date/2026-11-${d}/1d/1min.json`),
    );
    // Nights are filed under the morning they end: the range reaches the day after the window.
    expect(payloads.find((p) => p.dataType === 'sleep')!.ref).toBe('/1.2/user/-/sleep/date/2026-11-16/2026-11-23.json');
    const { records, rejected } = await parseAll(fitbitConnector, payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    const quantities = ofKind(records, 'quantity');
    const heart = quantities.filter((r) => r.type === 'heart_rate');
    expect(heart.length).toBeGreaterThan(7 * 1400);
    for (const r of heart) {
      expect(r.value).toBeGreaterThanOrEqual(40);
      expect(r.value).toBeLessThanOrEqual(200);
      expect(r).toMatchObject({ provider: 'fitbit', source: 'fitbit', body_worn: true, unit: 'count/min' });
    }
    // Local midnight of 2026-11-16 in Paris is 23:00 UTC the day before.
    expect(heart[0]!.start_date).toBe('2026-11-15T23:00:00.000Z');
    expect(heart[0]!.metadata).toMatchObject({ timezone: 'Europe/Paris', utc_offset: '+01:00' });
    expect(quantities.filter((r) => r.type === 'step_count').every((r) => r.value > 0)).toBe(true);
    expect(quantities.filter((r) => r.type === 'resting_heart_rate')).toHaveLength(7);
    expect(quantities.filter((r) => r.type === 'hrv_rmssd')).toHaveLength(8);
    expect(quantities.filter((r) => r.type === 'hrv_sdnn')).toHaveLength(0);
    expect(quantities.filter((r) => r.type === 'oxygen_saturation')).toHaveLength(8);
    expect(quantities.filter((r) => r.type === 'respiratory_rate')).toHaveLength(8);
    expect(quantities.filter((r) => r.type === 'body_mass').length).toBeGreaterThanOrEqual(2);
    for (const w of quantities.filter((r) => r.type === 'body_mass')) expect(w).toMatchObject({ device: 'Aria', body_worn: false, was_user_entered: false });
    expect(quantities.filter((r) => r.type === 'body_fat_percentage').length).toBe(quantities.filter((r) => r.type === 'body_mass').length);
    const days = ofKind(records, 'daily_summary');
    expect(days.map((d) => d.date)).toEqual(['16', '17', '18', '19', '20', '21', '22'].map((d) => `2026-11-${d}`));
    // The summary's steps are the intraday minutes' sum.
    const steps16 = quantities.filter((r) => r.type === 'step_count' && r.external_id.startsWith('step_count:2026-11-16T')).reduce((s, r) => s + r.value, 0);
    expect(days[0]!.steps).toBe(steps16);
    const sleeps = ofKind(records, 'sleep_session');
    expect(sleeps).toHaveLength(8);
    for (const s of sleeps) {
      expect(s.total_sleep_seconds).toBeGreaterThan(5 * 3600);
      expect(Date.parse(s.bedtime_end)).toBeLessThanOrEqual(NOW.getTime());
    }
    const workouts = ofKind(records, 'workout');
    expect(workouts.length).toBeGreaterThan(1);
    for (const w of workouts) expect(w).toMatchObject({ device: 'Charge 6', body_worn: true, metadata: { timezone: 'Europe/Paris', utc_offset: '+01:00' } });
    const ids = records.map((r) => r.external_id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers the same records for the same window (same external ids and values)', async () => {
    const once = await parseAll(fitbitConnector, (await runPull(sandbox, fitbitConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    const twice = await parseAll(fitbitConnector, (await runPull(sandbox, fitbitConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    expect(twice.records).toEqual(once.records);
  });

  it('follows pagination.next through the activity log list until the window is passed', async () => {
    const months = { start: new Date('2026-02-28T23:00:00.000Z'), end: new Date('2026-11-22T23:00:00.000Z') };
    const { payloads } = await runPull(sandbox, fitbitConnector, { accessToken: token, window: months, dataType: 'activity_logs' });
    expect(payloads.length).toBeGreaterThan(1);
    expect(payloads[1]!.ref).toContain('offset=100');
    const { records } = await parseAll(fitbitConnector, payloads, NOW.toISOString());
    const starts = ofKind(records, 'workout').map((w) => w.start_date);
    expect([...starts].sort()).toEqual(starts);
    // Winter time in March and November, summer time between: each log keeps the offset it was made in.
    expect(ofKind(records, 'workout').map((w) => w.metadata.utc_offset)).toEqual(expect.arrayContaining(['+02:00', '+01:00']));
  });

  it('pulls only the collection a notification names, and only what the grant covers', async () => {
    const body = await runPull(sandbox, fitbitConnector, { accessToken: token, window: WINDOW, dataType: 'body' });
    expect(new Set(body.payloads.map((p) => p.dataType))).toEqual(new Set(['weight', 'body_fat']));
    const sleepOnly = await runPull(sandbox, fitbitConnector, { accessToken: token, window: WINDOW, scopes: ['sleep', 'profile'] });
    expect(new Set(sleepOnly.payloads.map((p) => p.dataType))).toEqual(new Set(['sleep']));
  });

  it('a refused token, a 429 and a 5xx surface as ProviderCallError refused, rate_limited (Retry-After) and unavailable', async () => {
    sandbox.failures.fail('fitbit', 'invalid_grant');
    await expect(runPull(sandbox, fitbitConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'refused' });
    sandbox.failures.fail('fitbit', 'rate_limited', { retryAfterSeconds: 1200 });
    await expect(runPull(sandbox, fitbitConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 1200 });
    sandbox.failures.fail('fitbit', 'server_error');
    const err = await runPull(sandbox, fitbitConnector, { accessToken: token, window: WINDOW }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderCallError);
    expect(err).toMatchObject({ kind: 'unavailable' });
  });

  it('stops as rate_limited before the 151st call of the hour (Fitbit-Rate-Limit-Remaining), with the seconds to the hour’s reset', async () => {
    const fresh = (await sandboxGrant(sandbox, fitbitConnector)).accessToken;
    const long = { start: new Date('2026-08-31T22:00:00.000Z'), end: new Date('2026-11-22T23:00:00.000Z') };
    const stored: string[] = [];
    const err = await (async () => {
      const { ctx } = await runPull(sandbox, fitbitConnector, { accessToken: fresh, window: WINDOW, dataType: 'weight' });
      for await (const p of fitbitConnector.pull({ ...ctx, window: long, dataType: 'activities' })) stored.push(p.ref);
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 3600 });
    // Every call that was answered was stored; none was refused by Fitbit.
    expect(stored.length).toBeGreaterThan(140);
    expect(stored.length).toBeLessThan(150);
  });
});
