import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../../src/sandbox/sandboxSettings.js';
import { backfillThroughSandbox } from '../../connections/consentFlow.js';
import { allPages } from '../../server/records/recordsHelper.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';

/**
 * A provider from consent to reads (issue 11 "Connectors for real providers"): the sandbox and a
 * service set up for `provider` around the file's tests; each call connects a new user through the
 * sandbox's OAuth pages, whose backfill run pulls the sandbox's API with the real connector, and
 * answers the run, the user's records of the last 32 days by route, and the rejected records.
 */
export function sandboxBackfill(provider: string) {
  let sandbox: Sandbox;
  let t: TestApp;
  let tenant: TenantHandle;
  beforeAll(async () => {
    sandbox = await startSandbox();
    t = await startTestApp(sandboxSettings(sandbox, [provider]), { syncPolling: false });
    tenant = await t.createTenant(`${provider}-sync`);
  });
  afterAll(async () => {
    await t?.close();
    await sandbox?.close();
  });
  return async () => {
    const user = await t.createUser(tenant.apiKey);
    const backfill = await backfillThroughSandbox(t, tenant.apiKey, user.id, provider);
    const range = { start: new Date(Date.now() - 32 * 86_400_000).toISOString(), end: new Date().toISOString(), view: 'all' };
    const list = async (path: string, query: Record<string, string> = {}) => (await allPages<Record<string, unknown>>(t, tenant.apiKey, `/v1/users/${user.id}/${path}`, { ...range, ...query })).flatMap((p) => p.data);
    const rejected = async () => {
      const res = await t.call('GET', `/v1/users/${user.id}/rejected-records`, { key: tenant.apiKey });
      expectStatus(res, 200);
      return (res.json() as { data: unknown[] }).data;
    };
    return { backfill, list, rejected };
  };
}
