import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { polarConnector } from '../../../../src/sources/providers/polar/pull.js';
import { polarSandbox } from '../../../../src/sandbox/data/polar.js';
import { startSandbox, type Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { parseAll, runPull, sandboxGrant } from '../../shared/sandboxPull.js';

/**
 * Polar AccessLink pulled from the sandbox over HTTP (issue 11 "Connectors for real providers"
 * and "Provider sandbox"): registration, transactions opened, listed, fetched and committed only
 * in acknowledge, nights and Nightly Recharge, continuous heart rate; every payload decoded.
 */
const NOW = new Date('2026-11-23T10:00:00.000Z');
const WINDOW = { start: new Date('2026-11-16T00:00:00.000Z'), end: new Date('2026-11-23T00:00:00.000Z') };

let sandbox: Sandbox;
let grant: { accessToken: string; providerUserId: string | null };
beforeAll(async () => {
  sandbox = await startSandbox({ now: () => NOW, data: { polar: polarSandbox() } });
  grant = await sandboxGrant(sandbox, polarConnector);
});
afterAll(async () => {
  await sandbox?.close();
});

const pull = (o: { dataType?: string } = {}) => runPull(sandbox, polarConnector, { accessToken: grant.accessToken, providerUserId: grant.providerUserId, window: WINDOW, ...o });

describe('Polar pull', () => {
  it('registers the user, pulls every data type and decodes it all; a transaction is offered again until acknowledged', async () => {
    // The token answer names the user (x_user_id): its data paths are under /v3/users/{x_user_id}.
    expect(grant.providerUserId).toMatch(/^\d+$/);
    const first = await pull();
    const types = new Set(first.payloads.map((p) => p.dataType));
    expect([...types].sort()).toEqual(['activities', 'continuous_heart_rate', 'exercises', 'nightly_recharge', 'physical_information', 'sleep']);
    const { records, rejected } = await parseAll(polarConnector, first.payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    const workouts = records.filter((r) => r.kind === 'workout');
    expect(workouts.length).toBeGreaterThan(3);
    for (const w of workouts) {
      expect(w).toMatchObject({ provider: 'polar', source: 'polar', device: 'Polar Vantage V2', body_worn: true });
      // Helsinki in November is UTC+2.
      expect(w.metadata.timezone).toBe('+02:00');
    }
    expect(records.filter((r) => r.kind === 'sleep_session').length).toBe(28);
    expect(records.some((r) => r.kind === 'quantity' && r.type === 'hrv_rmssd')).toBe(true);
    expect(records.some((r) => r.kind === 'quantity' && r.type === 'step_count')).toBe(true);
    expect(records.some((r) => r.kind === 'quantity' && r.type === 'body_mass' && r.value === 78.1)).toBe(true);
    expect(records.filter((r) => r.kind === 'daily_summary').length).toBe(14);
    // Exercise heart rate samples lie within their exercise.
    const w = workouts[0]!;
    const hr = records.filter((r) => r.kind === 'quantity' && r.metadata.exercise_id === Number(w.external_id.slice('exercise-'.length)));
    expect(hr.length).toBeGreaterThan(100);
    for (const s of hr) expect(s.kind === 'quantity' && s.start_date >= w.start_date && s.start_date <= w.end_date).toBe(true);

    // Not acknowledged: the next pull is offered the same items, with the same external ids.
    const again = await pull();
    const second = await parseAll(polarConnector, again.payloads, NOW.toISOString());
    expect(second.records.map((r) => r.external_id).sort()).toEqual(records.map((r) => r.external_id).sort());
    expect(second.records).toEqual(expect.arrayContaining(records.filter((r) => r.kind === 'workout')));

    // Acknowledged: the transactions are committed and nothing of them is offered again (204).
    await polarConnector.acknowledge!(again.ctx);
    const after = await pull({ dataType: 'exercises' });
    expect(after.payloads).toEqual([]);
    const activities = await pull({ dataType: 'activities' });
    expect(activities.payloads).toEqual([]);
  });

  it('surfaces the sandbox’s planned failures as ProviderCallError of the right kind', async () => {
    sandbox.failures.fail('polar', 'rate_limited', { times: 1, retryAfterSeconds: 30 });
    await expect(pull({ dataType: 'sleep' })).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 30 });
    sandbox.failures.fail('polar', 'invalid_grant', { times: 1 });
    await expect(pull({ dataType: 'sleep' })).rejects.toMatchObject({ kind: 'refused' });
    sandbox.failures.fail('polar', 'server_error', { times: 1 });
    await expect(pull({ dataType: 'sleep' })).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('registers once: the registration a pull made answers 409 when repeated, and another user’s paths are refused', async () => {
    await pull({ dataType: 'physical_information' });
    const post = (path: string, body: unknown) =>
      fetch(`${sandbox.urls.polar}${path}`, { method: 'POST', headers: { authorization: `Bearer ${grant.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/v3/users', { 'member-id': 'again' })).status).toBe(409);
    expect((await post('/v3/users', {})).status).toBe(400);
    const other = await fetch(`${sandbox.urls.polar}/v3/users/1/exercise-transactions`, { method: 'POST', headers: { authorization: `Bearer ${grant.accessToken}` } });
    expect(other.status).toBe(403);
  });

  it('needs the Polar user id of the token answer', async () => {
    await expect(runPull(sandbox, polarConnector, { accessToken: grant.accessToken, providerUserId: null, window: WINDOW })).rejects.toThrow(/x_user_id/);
  });
});
