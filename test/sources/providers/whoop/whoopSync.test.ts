import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../../../src/sandbox/sandboxSettings.js';
import { backfillThroughSandbox } from '../../../connections/consentFlow.js';
import { allPages } from '../../../server/records/recordsHelper.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../../support/server.js';

/**
 * WHOOP from consent to reads (issue 11 "Connectors for real providers"): a user connects through
 * the sandbox's OAuth pages, the backfill run pulls the sandbox's WHOOP API with the real
 * connector, the ETL decodes the stored payloads, and the read routes answer WHOOP's records.
 */
let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  sandbox = await startSandbox();
  t = await startTestApp(sandboxSettings(sandbox, ['whoop']), { syncPolling: false });
  tenant = await t.createTenant('whoop-sync');
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('WHOOP through the sync engine and the ETL', () => {
  it('a backfill on connect stores WHOOP\u2019s pages, and sleep, recovery (HRV as RMSSD), workouts and cycles read back with provider and source whoop', async () => {
    const user = await t.createUser(tenant.apiKey);
    const backfill = await backfillThroughSandbox(t, tenant.apiKey, user.id, 'whoop');
    expect(backfill).toMatchObject({ trigger: 'backfill', status: 'succeeded' });
    expect(backfill.objects_stored).toBeGreaterThan(5);

    const range = { start: new Date(Date.now() - 32 * 86_400_000).toISOString(), end: new Date().toISOString(), view: 'all' };
    const list = async (path: string, query: Record<string, string> = {}) => (await allPages<Record<string, unknown>>(t, tenant.apiKey, `/v1/users/${user.id}/${path}`, { ...range, ...query })).flatMap((p) => p.data);
    const sleep = await list('sleep');
    expect(sleep.length).toBeGreaterThanOrEqual(25);
    expect(sleep.every((s) => s.provider === 'whoop' && s.source === 'whoop')).toBe(true);
    expect((await list('samples', { type: 'readiness_score' })).length).toBeGreaterThanOrEqual(25);
    const hrv = await list('samples', { type: 'hrv_rmssd' });
    expect(hrv.length).toBeGreaterThanOrEqual(25);
    expect(await list('samples', { type: 'hrv_sdnn' })).toEqual([]);
    expect((await list('workouts')).length).toBeGreaterThan(5);
    expect((await list('daily')).length).toBeGreaterThanOrEqual(25);
    const rejected = await t.call('GET', `/v1/users/${user.id}/rejected-records`, { key: tenant.apiKey });
    expectStatus(rejected, 200);
    expect((rejected.json() as { data: unknown[] }).data).toEqual([]);
  });
});
