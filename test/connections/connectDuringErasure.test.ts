import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { expectProblem, expectStatus, startTestApp, type TestApp } from '../support/server.js';

/**
 * Spec "Provider erasure": while an erasure job of a user and provider is unfinished, connecting
 * that provider gets 409. The deletion runner is not started here, so the job stays pending.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OURA_BASE_URL: 'http://127.0.0.1:9', OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id, OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret, STRAVA_CLIENT_ID: SANDBOX_CLIENTS.strava!.id, STRAVA_CLIENT_SECRET: SANDBOX_CLIENTS.strava!.secret }, { runBackground: 'projections' });
});
afterAll(async () => {
  await t?.close();
});

describe('connecting while the provider erasure runs (spec "Provider erasure")', () => {
  it('answers 409 for that provider only', async () => {
    const tenant = await t.createTenant('erasing');
    const user = await t.createUser(tenant.apiKey);
    const erase = await t.call('DELETE', `/v1/users/${user.id}/data/oura`, { key: tenant.apiKey });
    expectStatus(erase, 202);
    const jobId = (erase.json() as { job_id: string }).job_id;
    const refused = expectProblem(await t.call('POST', `/v1/users/${user.id}/connections/oura`, { key: tenant.apiKey }), 409);
    expect(refused.detail).toContain(jobId);
    // Another provider of the same user is not affected.
    expectStatus(await t.call('POST', `/v1/users/${user.id}/connections/strava`, { key: tenant.apiKey }), 200);
  });
});
