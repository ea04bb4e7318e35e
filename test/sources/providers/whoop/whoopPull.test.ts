import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import { ProviderCallError } from '../../../../src/sources/shared/oauthClient.js';
import { WHOOP_PAGE_LIMIT, whoopConnector } from '../../../../src/sources/providers/whoop/pull.js';
import { startSandbox, type Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { grantedSandbox, parseAll, runPull, sandboxGrant } from '../../shared/sandboxPull.js';

/**
 * The WHOOP developer API v2 pulled from the sandbox over HTTP (issue 11 "Connectors for real
 * providers" and "Provider sandbox"): real OAuth, instant windows, `limit` 25 with `next_token`
 * sent back as `nextToken`, every payload decoded, the open cycle and pending scores handled, a
 * repeated pull identical, refusals classed for the sync engine.
 */
const NOW = new Date('2026-11-23T15:00:00.000Z');
const WINDOW = { start: new Date('2026-10-20T00:00:00.000Z'), end: new Date('2026-11-23T15:00:00.000Z') };

let sandbox: Sandbox, token: string;
beforeAll(async () => {
  ({ sandbox, token } = await grantedSandbox(whoopConnector, NOW));
});
afterAll(async () => {
  await sandbox?.close();
});

const of = <K extends NormalizedRecord['kind']>(records: NormalizedRecord[], kind: K) => records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);

describe('WHOOP pull', () => {
  it('pulls five weeks of cycles, recoveries, sleeps and workouts 25 a page and decodes them all', async () => {
    const { payloads } = await runPull(sandbox, whoopConnector, { accessToken: token, window: WINDOW });
    expect(new Set(payloads.map((p) => p.dataType))).toEqual(new Set(whoopConnector.descriptor.dataTypes));
    const cyclePages = payloads.filter((p) => p.dataType === 'cycle');
    expect(cyclePages.length).toBe(2);
    expect(cyclePages[0]!.ref).toBe(`/developer/v2/cycle?end=2026-11-23T15%3A00%3A00.000Z&limit=${WHOOP_PAGE_LIMIT}&start=2026-10-20T00%3A00%3A00.000Z`);
    expect(cyclePages[1]!.ref).toContain('nextToken=');
    expect((JSON.parse(cyclePages[0]!.body.toString()) as { records: unknown[] }).records).toHaveLength(25);

    const { records, rejected } = await parseAll(whoopConnector, payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    const summaries = of(records, 'daily_summary');
    // One cycle a day from the night before 20 October to today's, which is still open.
    expect(summaries.length).toBe(36);
    const today = summaries.find((s) => s.date === '2026-11-23')!;
    expect(today.metadata).toMatchObject({ in_progress: true, end: null, timezone: '-05:00' });
    expect(records.some((r) => r.external_id === `${today.external_id}:total_energy`)).toBe(false);
    // Summer time ended on 1 November in New York.
    expect(summaries.find((s) => s.date === '2026-10-25')!.metadata.timezone).toBe('-04:00');
    const q = of(records, 'quantity');
    const byType = (t: string) => q.filter((x) => x.type === t);
    expect(byType('readiness_score').length).toBe(36);
    expect(byType('hrv_rmssd').length).toBe(36);
    expect(byType('hrv_sdnn')).toEqual([]);
    expect(byType('resting_heart_rate').length).toBe(36);
    expect(byType('sleeping_wrist_temperature').length).toBe(36);
    expect(byType('total_energy_burned').length).toBe(35);
    for (const e of byType('total_energy_burned')) expect(e.value).toBeGreaterThan(1500);
    const sleeps = of(records, 'sleep_session');
    // The cycle of 19 October reaches into the window; its night (ended that morning) does not.
    expect(sleeps.filter((s) => !s.metadata.nap).length).toBe(35);
    // Stage milliseconds rounded to seconds one by one: the sum may differ from the span by a second or two.
    for (const s of sleeps) expect(Math.abs(s.total_sleep_seconds + s.awake_seconds - (Date.parse(s.bedtime_end) - Date.parse(s.bedtime_start)) / 1000)).toBeLessThanOrEqual(2);
    const workouts = of(records, 'workout');
    expect(workouts.length).toBeGreaterThan(10);
    for (const w of workouts) {
      expect(['running', 'cycling', 'weightlifting', 'yoga', 'walking', 'hiit']).toContain(w.type);
      expect(w.active_energy_kcal).toBeGreaterThan(0);
    }
    expect(byType('body_mass')).toMatchObject([{ value: 81.6466, was_user_entered: true, body_worn: false }]);
    const ids = records.map((r) => r.external_id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers the same records for the same window: a re-pull has the same external ids and values', async () => {
    const once = await parseAll(whoopConnector, (await runPull(sandbox, whoopConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    const twice = await parseAll(whoopConnector, (await runPull(sandbox, whoopConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    expect(twice.records).toEqual(once.records);
  });

  it('takes a sleep PENDING_SCORE as not yet there, and stores it once scored', async () => {
    // Half an hour after waking on 23 November: that night is scored from 30 minutes after its end.
    const early = new Date('2026-11-23T11:00:00.000Z');
    const s = await startSandbox({ now: () => early });
    try {
      const t = (await sandboxGrant(s, whoopConnector)).accessToken;
      const window = { start: new Date('2026-11-22T00:00:00.000Z'), end: early };
      const { records } = await parseAll(whoopConnector, (await runPull(s, whoopConnector, { accessToken: t, window, dataType: 'sleep' })).payloads, early.toISOString());
      const later = await parseAll(whoopConnector, (await runPull(sandbox, whoopConnector, { accessToken: token, window, dataType: 'sleep' })).payloads, NOW.toISOString());
      const nights = (rs: NormalizedRecord[]) => of(rs, 'sleep_session').filter((x) => !x.metadata.nap).map((x) => x.bedtime_end.slice(0, 10));
      expect(nights(later.records)).toContain('2026-11-23');
      const pendingNow = nights(records).includes('2026-11-23');
      // Either the night ended within 30 minutes of `early` (pending, not stored) or before (stored).
      const ended = of(later.records, 'sleep_session').find((x) => !x.metadata.nap && x.bedtime_end.startsWith('2026-11-23'))!;
      expect(pendingNow).toBe(early.getTime() - Date.parse(ended.bedtime_end) >= 30 * 60_000);
    } finally {
      await s.close();
    }
  });

  it('the sandbox holds WHOOP\u2019s own limits: a page of more than 25 or a bad nextToken is rejected (a request fault, not a refusal of the grant)', async () => {
    const { ctx } = await runPull(sandbox, whoopConnector, { accessToken: token, window: { start: WINDOW.start, end: WINDOW.start } });
    await expect(ctx.http({ path: '/developer/v2/cycle', query: { limit: '26' } })).rejects.toMatchObject({ kind: 'rejected' });
    await expect(ctx.http({ path: '/developer/v2/activity/sleep', query: { nextToken: 'not-a-token' } })).rejects.toMatchObject({ kind: 'rejected' });
    expect((await ctx.http({ path: '/developer/v2/cycle', query: { limit: '25' } })).status).toBe(200);
  });

  it('pulls only the data type a notification names, and only what the granted scopes cover', async () => {
    const only = await runPull(sandbox, whoopConnector, { accessToken: token, window: WINDOW, dataType: 'recovery' });
    expect(new Set(only.payloads.map((p) => p.dataType))).toEqual(new Set(['recovery']));
    const some = await runPull(sandbox, whoopConnector, { accessToken: token, window: WINDOW, scopes: ['offline', 'read:sleep', 'read:workout'] });
    expect(new Set(some.payloads.map((p) => p.dataType))).toEqual(new Set(['sleep', 'workout']));
  });

  it('surfaces a 429 as rate_limited with Retry-After, a 401 as refused and a 5xx as unavailable', async () => {
    sandbox.failures.fail('whoop', 'rate_limited', { retryAfterSeconds: 60 });
    await expect(runPull(sandbox, whoopConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 60 });
    sandbox.failures.fail('whoop', 'invalid_grant');
    await expect(runPull(sandbox, whoopConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'refused' });
    sandbox.failures.fail('whoop', 'server_error');
    const err = await runPull(sandbox, whoopConnector, { accessToken: token, window: WINDOW }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderCallError);
    expect(err).toMatchObject({ kind: 'unavailable' });
  });
});
