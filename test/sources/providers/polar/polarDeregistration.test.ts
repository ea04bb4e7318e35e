import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxData } from '../../../../src/sandbox/data/index.js';
import { startSandbox, type Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../../../src/sandbox/sandboxSettings.js';
import type { DataHandler } from '../../../../src/sandbox/sandboxTypes.js';
import { connectThroughSandbox, drainSync, providerUserIdOf } from '../../../connections/consentFlow.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../../support/server.js';
import { eventually } from '../../../webhooks/receiver.js';

/**
 * Issue 22 point 5: AccessLink keeps a user registered with the application until the application
 * deletes the registration; a disconnect (and a user's deletion) calls the connector's
 * deregistration hook, which deletes it (`DELETE /v3/users/{user-id}`) with the last token.
 */
const calls: { method: string; path: string }[] = [];
const data = sandboxData();
const polar = data.polar!;
const seen: DataHandler = (ctx) => {
  calls.push({ method: ctx.method, path: ctx.path });
  return polar(ctx);
};

let sandbox: Sandbox;
let t: TestApp;
let tenant: TenantHandle;
beforeAll(async () => {
  sandbox = await startSandbox({ data: { ...data, polar: seen } });
  t = await startTestApp(sandboxSettings(sandbox, ['polar']), { syncPolling: false });
  tenant = await t.createTenant('polar-deregistration');
}, 60_000);
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

async function registeredUser() {
  const user = await t.createUser(tenant.apiKey);
  await connectThroughSandbox(t, tenant.apiKey, user.id, 'polar');
  // The backfill registers the user with the application at Polar.
  await eventually(async () => {
    await t.ctx.settle();
    const runs = await t.call('GET', `/v1/users/${user.id}/sync-runs`, { key: tenant.apiKey });
    return (runs.json() as { data: unknown[] }).data.length > 0;
  });
  await drainSync(t);
  expect(calls).toContainEqual({ method: 'POST', path: '/v3/users' });
  const polarUser = (await providerUserIdOf(t, user.id, 'polar'))!;
  expect(polarUser).toMatch(/^\d+$/);
  return { userId: user.id, polarUser };
}

describe('Polar deregistration on disconnect (issue 22)', () => {
  it('DELETE …/connections/polar deletes the user registration at Polar (DELETE /v3/users/{id})', async () => {
    const { userId, polarUser } = await registeredUser();
    calls.length = 0;
    expectStatus(await t.call('DELETE', `/v1/users/${userId}/connections/polar`, { key: tenant.apiKey }), 204);
    expect(calls).toContainEqual({ method: 'DELETE', path: `/v3/users/${polarUser}` });
  });

  it("a user's deletion deregisters the user at Polar too", async () => {
    const { userId, polarUser } = await registeredUser();
    calls.length = 0;
    const job = await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, userId));
    expect(job.status).toBe('done');
    expect(calls).toContainEqual({ method: 'DELETE', path: `/v3/users/${polarUser}` });
  });

  it('a disconnect still succeeds when Polar fails the deregistration (best effort)', async () => {
    const { userId } = await registeredUser();
    sandbox.failures.fail('polar', 'server_error');
    expectStatus(await t.call('DELETE', `/v1/users/${userId}/connections/polar`, { key: tenant.apiKey }), 204);
    const res = await t.call('GET', `/v1/users/${userId}/connections`, { key: tenant.apiKey });
    expect((res.json() as { data: { provider: string; status: string }[] }).data.find((c) => c.provider === 'polar')?.status).toBe('disconnected');
  });
});
