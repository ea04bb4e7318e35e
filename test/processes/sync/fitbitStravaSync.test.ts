import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CLIENTS } from '../../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/sandboxServer.js';
import { connectBeforeRetirement, connectThroughSandbox } from '../../connections/consentFlow.js';
import { expectStatus, startTestApp, type TestApp } from '../../support/server.js';
import { eventually } from '../../webhooks/receiver.js';

/**
 * Issue 11 acceptance, for Fitbit and Strava: a user connected over HTTP through the sandbox is
 * backfilled by the sync engine, the payloads go through the ETL, and the normalised records are
 * read through the read routes (workouts with routes, heart rate samples, sleep, daily summaries).
 */
let sandbox: Sandbox;
let t: TestApp;
beforeAll(async () => {
  sandbox = await startSandbox();
  const env: Record<string, string> = {};
  for (const slug of ['fitbit', 'strava']) {
    const up = slug.toUpperCase();
    Object.assign(env, { [`${up}_BASE_URL`]: sandbox.urls[slug]!, [`${up}_CLIENT_ID`]: SANDBOX_CLIENTS[slug]!.id, [`${up}_CLIENT_SECRET`]: SANDBOX_CLIENTS[slug]!.secret });
  }
  t = await startTestApp(env, { syncSettings: { backfillDays: 3 }, syncPolling: false });
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

async function backfilled(provider: string) {
  const tenant = await t.createTenant(`sync-${provider}`);
  const user = await t.createUser(tenant.apiKey);
  // Fitbit is retired (contracts §14): its connections are the ones made before; their pulls still decode.
  if (provider === 'fitbit') await connectBeforeRetirement(t, tenant.id, user.id, provider);
  else await connectThroughSandbox(t, tenant.apiKey, user.id, provider);
  // The reactor queues the backfill on connect.
  const runs = async () => {
    await t.ctx.settle();
    const res = await t.call('GET', `/v1/users/${user.id}/sync-runs`, { key: tenant.apiKey });
    return (res.json() as { data: { status: string; trigger: string; objects_stored: number | null; error: string | null }[] }).data;
  };
  await eventually(async () => (await runs()).some((r) => r.trigger === 'backfill'));
  await t.ctx.sync.runDue();
  const [run] = await runs();
  expect(run).toMatchObject({ trigger: 'backfill', status: 'succeeded', error: null });
  expect(run!.objects_stored).toBeGreaterThan(0);
  const read = async (path: string, query: Record<string, string> = {}) => {
    const res = await t.call('GET', `/v1/users/${user.id}/${path}`, { key: tenant.apiKey, query: { view: 'all', limit: '500', ...query } });
    expectStatus(res, 200);
    return (res.json() as { data: Record<string, unknown>[] }).data;
  };
  return { read };
}

describe('Fitbit and Strava through the sync engine and the ETL', () => {
  it('Fitbit: a backfill stores every data type and the read routes answer heart rate, sleep, daily summaries and HRV from provider fitbit', async () => {
    const { read } = await backfilled('fitbit');
    const heart = await eventually(async () => {
      const d = await read('samples', { type: 'heart_rate' });
      return d.length > 0 ? d : null;
    });
    expect(heart[0]).toMatchObject({ provider: 'fitbit', source: 'fitbit', unit: 'count/min' });
    expect((await eventually(async () => ((await read('sleep')).length ? read('sleep') : null)))[0]).toMatchObject({ provider: 'fitbit' });
    expect((await read('daily')).length).toBeGreaterThan(0);
    expect(await eventually(async () => ((await read('samples', { type: 'hrv_rmssd' })).length ? true : null))).toBe(true);
  });

  it('Strava: a backfill makes one workout per activity, recorded ones with their routes', async () => {
    const { read } = await backfilled('strava');
    const workouts = await eventually(async () => {
      const d = await read('workouts');
      return d.length > 0 ? d : null;
    });
    for (const w of workouts) expect(w).toMatchObject({ provider: 'strava', source: 'strava' });
    // Rides and runs have a track; pool swims and typed-in sessions have none.
    const tracked = workouts.filter((w) => w.type === 'cycling' || w.type === 'running');
    for (const w of tracked) expect((w.track as { points: number }).points).toBeGreaterThan(100);
  });
});
