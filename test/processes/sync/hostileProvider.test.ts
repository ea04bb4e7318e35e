import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_RATE_LIMIT_WAIT_MS } from '../../../commands/sync/syncSchedule.js';
import { sandboxSettings } from '../../../src/sandbox/sandboxSettings.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/sandboxServer.js';
import { connectBeforeRetirement, connectThroughSandbox } from '../../connections/consentFlow.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';
import { eventually } from '../../webhooks/receiver.js';
import { FakeProvider, hostileProxy, json, type Intercept } from '../../sources/shared/fakeProvider.js';

/**
 * Issue 20 through the sync engine: Fitbit and Polar are the sandbox behind a proxy that turns
 * one answer hostile. A pagination link (Fitbit `pagination.next`) or a transaction address
 * (Polar `resource-uri`) naming another host ends the run `failed` (the engine's `rejected`
 * outcome, reason and error on the run) and that host receives nothing; a `Retry-After` of 10⁹
 * seconds or of a far-future date parks the run no longer than a day (finding 6).
 */
let sandbox: Sandbox;
let fitbitProxy: FakeProvider;
let polarProxy: FakeProvider;
let elsewhere: FakeProvider;
let t: TestApp;
let tenant: TenantHandle;
let intercept: Intercept = {};

beforeAll(async () => {
  sandbox = await startSandbox();
  fitbitProxy = await hostileProxy(sandbox.urls.fitbit!, () => intercept);
  polarProxy = await hostileProxy(sandbox.urls.polar!, () => intercept);
  elsewhere = await FakeProvider.start((_r, res) => json(res, 200, { activities: [], pagination: { next: '' } }));
  t = await startTestApp(sandboxSettings({ urls: { fitbit: fitbitProxy.origin, polar: polarProxy.origin } }, ['fitbit', 'polar']), {
    syncSettings: { backfillDays: 7 },
    syncPolling: false,
  });
  tenant = await t.createTenant('hostile-provider');
});
afterAll(async () => {
  await t?.close();
  await fitbitProxy?.close();
  await polarProxy?.close();
  await elsewhere?.close();
  await sandbox?.close();
});
beforeEach(() => {
  intercept = {};
  elsewhere.seen.length = 0;
});

type Run = { id: number; trigger: string; status: string; attempts: number; error: string | null; next_attempt_at: string | null };

/** A user connected to the provider (through the proxy) whose backfill run is queued. */
async function connected(provider: string): Promise<{ userId: string; runs: () => Promise<Run[]> }> {
  const user = await t.createUser(tenant.apiKey);
  // Fitbit is retired (contracts §14): a connection made before, whose pulls the hostile proxy answers.
  if (provider === 'fitbit') await connectBeforeRetirement(t, tenant.id, user.id, provider);
  else await connectThroughSandbox(t, tenant.apiKey, user.id, provider);
  const runs = async () => {
    await t.ctx.settle();
    const res = await t.call('GET', `/v1/users/${user.id}/sync-runs`, { key: tenant.apiKey });
    expectStatus(res, 200);
    return (res.json() as { data: Run[] }).data;
  };
  await eventually(async () => (await runs()).some((r) => r.trigger === 'backfill'));
  return { userId: user.id, runs };
}

const health = async (userId: string, provider: string) => {
  const res = await t.call('GET', `/v1/users/${userId}/connections`, { key: tenant.apiKey });
  return (res.json() as { data: { provider: string; status: string; health: Record<string, unknown> }[] }).data.find((c) => c.provider === provider)!;
};

describe('a provider answer naming another host does not receive the token (issue 20, finding 3)', () => {
  it('Fitbit: a pagination.next on another host ends the run rejected with the reason, and that host receives no request', async () => {
    const { userId, runs } = await connected('fitbit');
    let pagesOffered = 0;
    intercept = {
      rewrite: (req, body) => {
        if (!req.path.startsWith('/1/user/-/activities/list.json') || !Array.isArray(body.activities) || body.activities.length === 0) return body;
        pagesOffered++;
        return { ...body, pagination: { ...(body.pagination as object), next: `${elsewhere.origin}/1/user/-/activities/list.json?offset=100&limit=100` } };
      },
    };
    await t.ctx.sync.runDue();
    expect(pagesOffered).toBe(1);
    const [run] = await runs();
    expect(run).toMatchObject({ trigger: 'backfill', status: 'failed', next_attempt_at: null });
    expect(run!.error).toMatch(new RegExp(`Fitbit named http://127\\.0\\.0\\.1:${elsewhere.port}, which is not one of its documented addresses`));
    expect(elsewhere.seen).toHaveLength(0);
    // The connection stays: the user need not consent again, the pull is what failed.
    expect(await health(userId, 'fitbit')).toMatchObject({ status: 'active', health: { healthy: false, reason: 'sync_failed', action: 'none' } });
  });

  it('Polar: a transaction resource-uri on another host ends the run rejected, and that host receives no request', async () => {
    const { runs } = await connected('polar');
    let offered = 0;
    intercept = {
      rewrite: (req, body) => {
        if (req.method !== 'POST' || !/-transactions$/.test(req.path) || typeof body['resource-uri'] !== 'string') return body;
        offered++;
        return { ...body, 'resource-uri': `${elsewhere.origin}${new URL(body['resource-uri']).pathname}` };
      },
    };
    await t.ctx.sync.runDue();
    expect(offered).toBeGreaterThan(0);
    const [run] = await runs();
    expect(run).toMatchObject({ trigger: 'backfill', status: 'failed' });
    expect(run!.error).toMatch(/Polar named http:\/\/127\.0\.0\.1:\d+, which is not one of its documented addresses/);
    expect(elsewhere.seen).toHaveLength(0);
  });
});

describe('a provider’s Retry-After is capped (issue 20, finding 6)', () => {
  it.each([
    ['10⁹ seconds', '1000000000'],
    ['a date in the year 9999', 'Fri, 31 Dec 9999 23:59:59 GMT'],
  ])('a 429 with Retry-After %s makes the run rate_limited until at most a day later', async (_what, retryAfter) => {
    const { userId, runs } = await connected('fitbit');
    intercept = {
      answer: (req, res) => {
        if (!req.path.startsWith('/1/user/-/profile.json')) return false;
        json(res, 429, { errors: [{ errorType: 'system', message: 'Too Many Requests' }] }, { 'retry-after': retryAfter });
        return true;
      },
    };
    const before = Date.now();
    await t.ctx.sync.runDue();
    const after = Date.now();
    const [run] = await runs();
    expect(run).toMatchObject({ trigger: 'backfill', status: 'rate_limited' });
    const next = Date.parse(run!.next_attempt_at!);
    expect(next).toBeLessThanOrEqual(after + MAX_RATE_LIMIT_WAIT_MS);
    expect(next).toBeGreaterThanOrEqual(before + MAX_RATE_LIMIT_WAIT_MS);
    expect(MAX_RATE_LIMIT_WAIT_MS).toBe(24 * 3_600_000);
    expect((await health(userId, 'fitbit')).health).toMatchObject({ reason: 'rate_limited', retry_at: run!.next_attempt_at });
  });
});
