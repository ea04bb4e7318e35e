import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userStream } from '../../commands/users/user.js';
import { openStores } from '../../src/app/stores.js';
import { loadConfig } from '../../src/config.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../src/sandbox/sandboxSettings.js';
import { newSecret } from '../../src/shared/secrets.js';
import { runCli } from '../cli/cliProcess.js';
import { connectThroughSandbox, providerUserIdOf } from '../connections/consentFlow.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';
import { eventually } from '../webhooks/receiver.js';

/**
 * Issue 20, finding 4: external_refs, tag labels and notes, consent evidence and connection
 * details are appended sealed under the user's profile key, and every route still answers them in
 * the clear while the user exists, also after `npm run cli -- projections rebuild` replayed the
 * log (another user's deletion in it: their sealed values no longer open, and their rows are gone
 * anyway).
 */
const ADMIN_API_KEY = newSecret('admin');
const dataDir = tempDir('wellstream-personal-readback-');
let sandbox: Sandbox;
let env: Record<string, string>;
let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  sandbox = await startSandbox();
  env = { DATA_DIR: dataDir, ADMIN_API_KEY, PUBLIC_BASE_URL: 'https://health.example.com', ...sandboxSettings(sandbox, ['oura']) };
  t = await startTestApp(env);
  tenant = await t.createTenant('readback');
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

type Seen = { user: unknown; tags: unknown; consents: unknown; connections: unknown; providerUserId: string | undefined };

async function seen(userId: string): Promise<Seen> {
  const get = async (path: string) => {
    const res = await t.call('GET', path, { key: tenant.apiKey });
    expectStatus(res, 200);
    return res.json() as Record<string, unknown>;
  };
  await t.ctx.settle();
  return {
    user: await get(`/v1/users/${userId}`),
    tags: (await get(`/v1/users/${userId}/tags`)).data,
    consents: (await get(`/v1/users/${userId}/consents/history`)).data,
    connections: (await get(`/v1/users/${userId}/connections`)).data,
    providerUserId: await providerUserIdOf(t, userId, 'oura'),
  };
}

/** The user's stream as stored, without opening anything. */
async function storedUserStream(userId: string): Promise<RecordedEvent[]> {
  const { eventStore, readStore, rawStore } = await openStores(loadConfig(env as NodeJS.ProcessEnv));
  try {
    return await eventStore.readStream(userStream(userId));
  } finally {
    await eventStore.close();
    await readStore.close();
    await rawStore.close();
  }
}

describe('personal data sealed in the log reads back in the clear (issue 20, finding 4)', () => {
  it('users, tags, consents and connections answer external_ref, label, note, evidence and the provider user id in the clear; the log holds them sealed; the same after `projections rebuild` with another user deleted', { timeout: 120_000 }, async () => {
    const kept = await t.createUser(tenant.apiKey, { external_ref: 'patient-kept-17' });
    const gone = await t.createUser(tenant.apiKey, { external_ref: 'patient-gone-18' });
    for (const [u, label] of [[kept.id, 'flu'], [gone.id, 'cold']] as const) {
      const res = await t.call('POST', `/v1/users/${u}/tags`, { key: tenant.apiKey, body: { kind: 'illness', label, note: `${label}: stayed in bed`, start: '2026-11-01T00:00:00Z', end: null } });
      expectStatus(res, 201);
    }
    const { callback } = await connectThroughSandbox(t, tenant.apiKey, kept.id, 'oura', { redirect_uri: 'https://app.example.com/done?patient=17' });
    expect(callback.statusCode).toBe(302);
    expect(new URL(callback.headers.location as string).searchParams.get('patient')).toBe('17');
    await eventually(() => providerUserIdOf(t, kept.id, 'oura'));
    // The connection's backfill finishes first, so the sync times it writes are in both reads.
    await eventually(async () => {
      const res = await t.call('GET', `/v1/users/${kept.id}/connections`, { key: tenant.apiKey });
      const [c] = (res.json() as { data: { initial_backfill_at: string | null }[] }).data;
      return c?.initial_backfill_at ? true : undefined;
    }, 60_000);

    const before = await seen(kept.id);
    expect(before.user).toMatchObject({ id: kept.id, external_ref: 'patient-kept-17' });
    expect(before.tags).toMatchObject([{ kind: 'illness', label: 'flu', note: 'flu: stayed in bed', end: null }]);
    const consents = before.consents as { action: string; evidence: string }[];
    expect(consents.length).toBeGreaterThan(0);
    for (const c of consents) expect(c).toMatchObject({ action: 'granted', evidence: expect.stringMatching(/^authorization code grant at Oura; scopes: /) });
    expect(before.connections).toMatchObject([{ provider: 'oura', status: 'active' }]);
    expect(before.providerUserId).toEqual(expect.any(String));

    // As stored: the personal fields are sealed, what routes the events is not.
    const stored = await storedUserStream(kept.id);
    const registered = stored.find((e) => e.type === 'user.registered')!.data;
    expect(registered).toMatchObject({ user_id: kept.id, tenant_id: tenant.id, personal: { fields: ['external_ref'], key: `${kept.id}/profile/0` } });
    expect(registered).not.toHaveProperty('external_ref');
    const tagged = stored.find((e) => e.type === 'tag.created')!.data;
    expect(tagged).toMatchObject({ kind: 'illness', personal: { fields: ['label', 'note'] } });
    expect(JSON.stringify(stored)).not.toMatch(/patient-kept-17|stayed in bed/);

    expect((await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, gone.id), 30_000)).status).toBe('done');

    await t.close();
    const rebuild = await runCli(dataDir, 'projections', 'rebuild');
    expect(rebuild.code, rebuild.stderr).toBe(0);
    t = await startTestApp(env);

    expect(await seen(kept.id)).toEqual(before);
    expectStatus(await t.call('GET', `/v1/users/${gone.id}`, { key: tenant.apiKey }), 404);
    const users = await t.call('GET', '/v1/users', { key: tenant.apiKey });
    expect((users.json() as { data: { external_ref: string | null }[] }).data.map((u) => u.external_ref)).toEqual(['patient-kept-17']);
  });
});
