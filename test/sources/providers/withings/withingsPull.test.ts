import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderCallError } from '../../../../src/sources/shared/oauthClient.js';
import { withingsConnector } from '../../../../src/sources/providers/withings/pull.js';
import { startSandbox, type Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { grantedSandbox, parseAll, runPull, sandboxGrant } from '../../shared/sandboxPull.js';

/**
 * Withings pulled from the sandbox over HTTP (issue 11 "Connectors for real providers" and
 * "Provider sandbox"): real OAuth, POST actions with `{status, body}` answers, `more`/`offset`
 * paging, every payload decoded, a repeated pull identical, refusals classed for the sync engine.
 */
const NOW = new Date('2026-11-23T10:00:00.000Z');
const WINDOW = { start: new Date('2026-11-09T00:00:00.000Z'), end: new Date('2026-11-23T00:00:00.000Z') };

let sandbox: Sandbox, token: string;
beforeAll(async () => {
  ({ sandbox, token } = await grantedSandbox(withingsConnector, NOW));
});
afterAll(async () => {
  await sandbox?.close();
});

describe('Withings pull', () => {
  it('pulls two weeks of every data type, page by page, and decodes them all', async () => {
    const { payloads } = await runPull(sandbox, withingsConnector, { accessToken: token, window: WINDOW });
    const types = new Set(payloads.map((p) => p.dataType));
    expect([...types].sort()).toEqual(['activity', 'measure', 'sleep', 'workouts']);
    // Two weeks of measures do not fit in one page: the second page was asked with `offset`.
    expect(payloads.filter((p) => p.dataType === 'measure').length).toBeGreaterThan(1);
    expect(payloads.some((p) => p.ref.includes('offset=20'))).toBe(true);
    const { records, rejected } = await parseAll(withingsConnector, payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    const count = (pred: (r: (typeof records)[number]) => boolean) => records.filter(pred).length;
    expect(count((r) => r.kind === 'quantity' && r.type === 'body_mass')).toBe(14);
    expect(count((r) => r.kind === 'observation')).toBe(7);
    expect(count((r) => r.kind === 'sleep_session')).toBeGreaterThanOrEqual(14);
    expect(count((r) => r.kind === 'category' && r.type === 'sleep_analysis')).toBeGreaterThan(14 * 8);
    expect(count((r) => r.kind === 'daily_summary')).toBeGreaterThanOrEqual(14);
    expect(count((r) => r.kind === 'workout')).toBeGreaterThan(2);
    for (const r of records) if (r.kind === 'quantity' && r.type === 'body_mass') expect(r.value).toBeGreaterThan(60);
    // Every measure lies in the window (getmeas takes it in Unix seconds).
    for (const r of records) if (r.kind === 'quantity' && r.metadata.meastype !== undefined) expect(Date.parse(r.start_date)).toBeLessThan(WINDOW.end.getTime());
    // Sleep stages come with the night's heart and breathing rates (`get` with data_fields=hr,rr).
    expect(count((r) => r.kind === 'quantity' && r.type === 'respiratory_rate' && r.metadata.context === 'sleep')).toBeGreaterThan(14 * 30);
    const external = records.map((r) => r.external_id);
    expect(new Set(external).size).toBe(external.length);
  });

  it('answers the same records for the same window (same external ids and values)', async () => {
    const once = await parseAll(withingsConnector, (await runPull(sandbox, withingsConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    const twice = await parseAll(withingsConnector, (await runPull(sandbox, withingsConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    expect(twice.records).toEqual(once.records);
  });

  it('pulls only the data type a notification names, and skips what the grant does not cover', async () => {
    const sleepOnly = await runPull(sandbox, withingsConnector, { accessToken: token, window: WINDOW, dataType: 'sleep' });
    expect(new Set(sleepOnly.payloads.map((p) => p.dataType))).toEqual(new Set(['sleep']));
    const metricsOnly = await runPull(sandbox, withingsConnector, { accessToken: token, window: WINDOW, scopes: ['user.info,user.metrics'] });
    expect(new Set(metricsOnly.payloads.map((p) => p.dataType))).toEqual(new Set(['measure']));
  });

  it('surfaces the sandbox’s planned failures as ProviderCallError of the right kind', async () => {
    sandbox.failures.fail('withings', 'rate_limited', { times: 1, retryAfterSeconds: 90 });
    await expect(runPull(sandbox, withingsConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 90 });
    sandbox.failures.fail('withings', 'invalid_grant', { times: 1 });
    await expect(runPull(sandbox, withingsConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'refused' });
    sandbox.failures.fail('withings', 'server_error', { times: 1 });
    await expect(runPull(sandbox, withingsConnector, { accessToken: token, window: WINDOW })).rejects.toBeInstanceOf(ProviderCallError);
  });

  it('classes Withings’ own statuses in HTTP 200 answers: 601 rate limit, 401 re-consent', async () => {
    for (const [status, kind] of [[601, 'rate_limited'], [401, 'refused']] as const) {
      const own = await startSandbox({ now: () => NOW, data: { withings: () => ({ status: 200, body: { status, error: 'refused by the test' } }) } });
      try {
        const t = (await sandboxGrant(own, withingsConnector)).accessToken;
        await expect(runPull(own, withingsConnector, { accessToken: t, window: WINDOW })).rejects.toMatchObject({ kind });
      } finally {
        await own.close();
      }
    }
  });
});
