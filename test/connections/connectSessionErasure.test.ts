import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSessionStream, userConnectSessionsStream } from '../../commands/connections/connectSession.js';
import { StreamDeletedError } from '../../src/eventstore/eventStore.js';
import { expectStatus, startTestApp, type TestApp } from '../support/server.js';

/**
 * Spec "User" (deleting → removed: nothing of the user is kept): a connect session's stream is
 * named by a hash of its link's secret, so it cannot be found from the user; the user's list of
 * sessions names them, and the deletion erases every one.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function gone(stream: string): Promise<boolean> {
  try {
    return (await t.ctx.eventStore.readStream(stream)).length === 0;
  } catch (err) {
    if (err instanceof StreamDeletedError) return true;
    throw err;
  }
}

describe('connect sessions and user deletion', () => {
  it("erases the user's connect sessions (their events and list) with the user; another user's stay", async () => {
    const tenant = await t.createTenant('sessions');
    const user = await t.createUser(tenant.apiKey);
    const kept = await t.createUser(tenant.apiKey);
    const secrets: string[] = [];
    for (const id of [user.id, user.id, kept.id]) {
      const res = await t.call('POST', `/v1/users/${id}/connect-sessions`, { key: tenant.apiKey, body: {} });
      expectStatus(res, 201);
      secrets.push(new URL((res.json() as { url: string }).url).pathname.split('/').pop()!);
    }
    for (const s of secrets) expect(await gone(connectSessionStream(s))).toBe(false);

    const jobId = await t.deleteUser(tenant.apiKey, user.id);
    expect(await t.waitForDeletion(tenant.apiKey, jobId)).toMatchObject({ status: 'done' });

    expect(await gone(connectSessionStream(secrets[0]!))).toBe(true);
    expect(await gone(connectSessionStream(secrets[1]!))).toBe(true);
    expect(await gone(userConnectSessionsStream(user.id))).toBe(true);
    expect(await gone(connectSessionStream(secrets[2]!))).toBe(false);
    const page = await t.call('GET', `/connect/${secrets[0]}`);
    expect(page.statusCode).toBe(404);
  }, 60_000);
});
