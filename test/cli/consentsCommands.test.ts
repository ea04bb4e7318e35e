import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStores } from '../../src/app/stores.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { connectThroughSandbox } from '../connections/consentFlow.js';
import { expectStatus, startTestApp } from '../support/server.js';
import { jsonLines, runCli } from './cliProcess.js';

/**
 * `npm run cli -- consents replay --user <id> [--verify] [--at <time>]`: the consent history
 * replayed from the event store, each event with the state after it; --verify compares with the
 * read model and fails on a difference (issue "Consent history for auditors").
 */
let sandbox: Sandbox;
let dataDir: string;
let userId: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  const t = await startTestApp({ OURA_BASE_URL: sandbox.urls.oura!, OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id, OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret });
  dataDir = t.dataDir;
  try {
    const tenant = await t.createTenant('consent-replay');
    userId = (await t.createUser(tenant.apiKey)).id;
    await connectThroughSandbox(t, tenant.apiKey, userId, 'oura', { redirect_uri: 'https://app.example.com/cb' });
    expectStatus(await t.call('DELETE', `/v1/users/${userId}/connections/oura`, { key: tenant.apiKey }), 204);
    await connectThroughSandbox(t, tenant.apiKey, userId, 'oura', { redirect_uri: 'https://app.example.com/cb' });
  } finally {
    await t.close();
  }
});
afterAll(async () => {
  await sandbox?.close();
});

type Line = { id: number; at: string; provider: string; category: string; action: string; state: Record<string, string[]> };

describe('cli: consents replay', () => {
  it('prints every grant and revocation oldest first with the consent state after it; --verify passes', async () => {
    const run = await runCli(dataDir, 'consents', 'replay', '--user', userId, '--verify');
    expect(run.code, run.stderr).toBe(0);
    const lines = jsonLines(run);
    const events = lines.filter((l) => 'action' in l) as unknown as Line[];
    expect(events.map((e) => e.action)).toEqual([...Array(5).fill('granted'), ...Array(5).fill('revoked'), ...Array(5).fill('granted')]);
    expect(events[4]!.state).toEqual({ oura: ['activity', 'heart', 'profile', 'sleep', 'workouts'] });
    expect(events[9]!.state).toEqual({});
    expect(events[14]!.state).toEqual({ oura: ['activity', 'heart', 'profile', 'sleep', 'workouts'] });
    expect(lines[lines.length - 1]).toEqual({ verified: true, events: 15 });
  });

  it('--at prints the state at that time', async () => {
    const all = jsonLines(await runCli(dataDir, 'consents', 'replay', '--user', userId)) as unknown as Line[];
    const at = all[7]!.at;
    const expected = [...all].reverse().find((l) => Date.parse(l.at) <= Date.parse(at))!.state;
    const run = await runCli(dataDir, 'consents', 'replay', '--user', userId, '--at', at);
    expect(run.code, run.stderr).toBe(0);
    expect(jsonLines(run)).toEqual([{ at: new Date(at).toISOString(), state: expected }]);
    const before = await runCli(dataDir, 'consents', 'replay', '--user', userId, '--at', '2000-01-01T00:00:00Z');
    expect(jsonLines(before)).toEqual([{ at: '2000-01-01T00:00:00.000Z', state: {} }]);
  });

  it('--verify fails with a non-zero exit when the read model was tampered with', async () => {
    const { eventStore, readStore } = await openStores(loadConfig({ DATA_DIR: dataDir }));
    const [doc] = await readStore.find('consent_events', { filter: { user_id: userId }, limit: 1 });
    await readStore.applyChanges([{ op: 'update', collection: 'consent_events', id: doc!._id, set: { action: doc!.action === 'granted' ? 'revoked' : 'granted' } }]);
    await eventStore.close();
    await readStore.close();
    const run = await runCli(dataDir, 'consents', 'replay', '--user', userId, '--verify');
    expect(run.code).not.toBe(0);
    expect(run.stdout).toContain('difference');
  });

  it('refuses a --user that is not a uuid', async () => {
    const run = await runCli(dataDir, 'consents', 'replay', '--user', 'nope');
    expect(run.code).not.toBe(0);
  });
});
