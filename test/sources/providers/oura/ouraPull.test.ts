import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { ProviderCallError } from '../../../../src/sources/shared/oauthClient.js';
import { ouraConnector } from '../../../../src/sources/providers/oura/pull.js';
import type { Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { grantedSandbox, parseAll, runPull } from '../../shared/sandboxPull.js';

/**
 * Oura API v2 pulled from the sandbox over HTTP (issue 11 "Connectors for real providers" and
 * "Provider sandbox"): real OAuth, date and date-time windows, `next_token` paging, every payload
 * decoded, a repeated pull identical, refusals classed for the sync engine.
 */
const NOW = new Date('2026-11-23T10:00:00.000Z');
const WINDOW = { start: new Date('2026-11-09T00:00:00.000Z'), end: new Date('2026-11-23T00:00:00.000Z') };

let sandbox: Sandbox, token: string;
beforeAll(async () => {
  ({ sandbox, token } = await grantedSandbox(ouraConnector, NOW));
});
afterAll(async () => {
  await sandbox?.close();
});

const of = <K extends NormalizedRecord['kind']>(records: NormalizedRecord[], kind: K) => records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);

describe('Oura pull', () => {
  it('pulls two weeks of every data type page by page, asks dates one day beyond the window, and decodes them all', async () => {
    const { payloads } = await runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW });
    expect(new Set(payloads.map((p) => p.dataType))).toEqual(new Set(ouraConnector.descriptor.dataTypes));
    const sleepRefs = payloads.filter((p) => p.dataType === 'sleep').map((p) => p.ref);
    expect(sleepRefs[0]).toBe('/v2/usercollection/sleep?end_date=2026-11-23&start_date=2026-11-08');
    // 16 nights and some naps do not fit in one page: the next pages were asked with next_token.
    expect(sleepRefs.length).toBeGreaterThan(1);
    expect(sleepRefs.slice(1).every((r) => r.includes('next_token='))).toBe(true);
    expect(payloads.filter((p) => p.dataType === 'heartrate').length).toBeGreaterThan(2);
    expect(payloads.find((p) => p.dataType === 'heartrate')!.ref).toContain('start_datetime=2026-11-09T00%3A00%3A00.000Z');

    const { records, rejected } = await parseAll(ouraConnector, payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    const sessions = of(records, 'sleep_session');
    expect(sessions.filter((s) => s.metadata.type === 'long_sleep').length).toBe(16);
    for (const s of sessions) {
      // The hypnogram covers the whole period, phase after phase.
      expect(s.phases[0]!.start_date).toBe(s.bedtime_start);
      expect(s.phases.at(-1)!.end_date).toBe(s.bedtime_end);
      for (let i = 1; i < s.phases.length; i++) expect(s.phases[i]!.start_date).toBe(s.phases[i - 1]!.end_date);
      expect(s.total_sleep_seconds).toBe(s.deep_sleep_seconds + s.light_sleep_seconds + s.rem_sleep_seconds);
      expect(s.metadata.timezone).toBe('+02:00');
      expect(s).toMatchObject({ provider: 'oura', source: 'oura', body_worn: true });
    }
    const quantities = of(records, 'quantity');
    const byType = (t: string) => quantities.filter((q) => q.type === t);
    expect(byType('hrv_sdnn')).toEqual([]);
    expect(byType('hrv_rmssd').length).toBeGreaterThan(16 * 60);
    for (const q of byType('heart_rate')) expect(q.value).toBeGreaterThanOrEqual(40);
    expect(byType('heart_rate').length).toBeGreaterThan(14 * 100);
    expect(byType('sleep_score').length).toBe(16);
    expect(byType('readiness_score').length).toBe(16);
    expect(byType('oxygen_saturation').length).toBeGreaterThan(8);
    expect(byType('resting_heart_rate').length).toBe(16);
    expect(byType('body_mass')).toMatchObject([{ value: 68.4, unit: 'kg', was_user_entered: true, body_worn: false }]);
    const summaries = of(records, 'daily_summary');
    expect(summaries.map((s) => s.date)).toEqual(Array.from({ length: 16 }, (_, i) => new Date(Date.parse('2026-11-08') + i * 86_400_000).toISOString().slice(0, 10)));
    expect(summaries.every((s) => (s.steps ?? 0) > 0)).toBe(true);
    const workouts = of(records, 'workout');
    expect(workouts.length).toBeGreaterThan(3);
    for (const w of workouts) expect(['walking', 'running', 'cycling', 'strength_training', 'yoga']).toContain(w.type);
    for (const w of workouts.filter((x) => x.type === 'yoga')) expect(w.body_worn).toBe(false);
    const ids = records.map((r) => r.external_id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers the same records for the same window: a re-pull has the same external ids and values', async () => {
    const once = await parseAll(ouraConnector, (await runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    const twice = await parseAll(ouraConnector, (await runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    expect(twice.records.map((r) => r.external_id)).toEqual(once.records.map((r) => r.external_id));
    expect(twice.records).toEqual(once.records);
  });

  it('asks heart rate at most 30 days per request', async () => {
    const window = { start: new Date('2026-10-01T00:00:00.000Z'), end: new Date('2026-11-15T00:00:00.000Z') };
    const { payloads } = await runPull(sandbox, ouraConnector, { accessToken: token, window, dataType: 'heartrate' });
    const starts = new Set(payloads.map((p) => new URLSearchParams(p.ref.split('?')[1]).get('start_datetime')));
    expect([...starts]).toEqual(['2026-10-01T00:00:00.000Z', '2026-10-31T00:00:00.000Z']);
    const { records, rejected } = await parseAll(ouraConnector, payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    expect(records.every((r) => r.kind === 'quantity' && r.type === 'heart_rate')).toBe(true);
  });

  it('the sandbox holds Oura\u2019s own limits: more than 30 days of heart rate or a start after the end is rejected (a request fault, not a refusal of the grant)', async () => {
    const { ctx } = await runPull(sandbox, ouraConnector, { accessToken: token, window: { start: WINDOW.start, end: WINDOW.start } });
    const ask = (query: Record<string, string>) => ctx.http({ path: '/v2/usercollection/heartrate', query });
    await expect(ask({ start_datetime: '2026-09-01T00:00:00Z', end_datetime: '2026-10-15T00:00:00Z' })).rejects.toMatchObject({ kind: 'rejected' });
    await expect(ctx.http({ path: '/v2/usercollection/sleep', query: { start_date: '2026-11-10', end_date: '2026-11-01' } })).rejects.toMatchObject({ kind: 'rejected' });
    expect((await ask({ start_datetime: '2026-11-01T00:00:00Z', end_datetime: '2026-11-01T01:00:00Z' })).status).toBe(200);
  });

  it('pulls only the data type a notification names, and only what the granted scopes cover', async () => {
    const only = await runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW, dataType: 'workout' });
    expect(new Set(only.payloads.map((p) => p.dataType))).toEqual(new Set(['workout']));
    const daily = await runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW, scopes: ['daily'] });
    expect(new Set(daily.payloads.map((p) => p.dataType))).toEqual(new Set(['daily_activity', 'daily_sleep', 'daily_readiness', 'sleep']));
    // The SpO2 grant goes by two names.
    for (const scope of ['spo2', 'spo2Daily']) {
      const spo2 = await runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW, scopes: [scope] });
      expect(new Set(spo2.payloads.map((p) => p.dataType))).toEqual(new Set(['daily_spo2']));
    }
  });

  it('surfaces a 429 as rate_limited with Retry-After, a 401 as refused and a 5xx as unavailable', async () => {
    sandbox.failures.fail('oura', 'rate_limited', { retryAfterSeconds: 42 });
    await expect(runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 42 });
    sandbox.failures.fail('oura', 'invalid_grant');
    await expect(runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'refused' });
    sandbox.failures.fail('oura', 'server_error');
    const err = await runPull(sandbox, ouraConnector, { accessToken: token, window: WINDOW }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderCallError);
    expect(err).toMatchObject({ kind: 'unavailable' });
  });
});
