import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../src/sandbox/sandboxSettings.js';
import { newSecret } from '../../src/shared/secrets.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';
import { eventually, Receiver } from '../webhooks/receiver.js';
import { liveRowsOf, markedHealthConnect, markedHealthKit, markersOf, mergeMarkers, missingFrom, scanFiles, uploadMarked, type Markers } from './markedData.js';
import { profiledUser } from './markedProfile.js';

/**
 * Issue acceptance: "After deletion or provider erasure, no byte of the erased health values,
 * record texts or record uuids is readable from any file under DATA_DIR, while the other user's
 * and provider's data stay readable." Every file under DATA_DIR is read as bytes: raw uploads,
 * both SQLite files and their -wal and -shm files, the key files. Each erased marker is first
 * shown to be found by the same scan (so its absence later means something), then looked for
 * after the job is done, and again after the service restarted on the same DATA_DIR.
 */
const ADMIN_API_KEY = newSecret('admin');
const started: TestApp[] = [];
const start = async (dataDir: string, env: Record<string, string> = {}) => {
  const t = await startTestApp({ DATA_DIR: dataDir, ADMIN_API_KEY, ...env });
  started.push(t);
  return t;
};
afterAll(async () => {
  for (const t of started) await t.close().catch(() => {});
});

type Marked = { a: Markers; b: Markers };

async function markedUser(t: TestApp, tenant: TenantHandle, tag: string): Promise<{ id: string } & Marked> {
  const user = await t.createUser(tenant.apiKey);
  const hk = markedHealthKit(tag);
  const hc = markedHealthConnect(tag);
  await uploadMarked(t, tenant.apiKey, user.id, 'device-a', hk.payload);
  await uploadMarked(t, tenant.apiKey, user.id, 'device-b', hc.payload);
  return { id: user.id, a: await markersOf('device-a', hk.payload, hk.texts), b: await markersOf('device-b', hc.payload, hc.texts) };
}

async function restart(t: TestApp, dataDir: string, env: Record<string, string> = {}): Promise<TestApp> {
  await t.close();
  started.splice(started.indexOf(t), 1);
  const again = await start(dataDir, env);
  await again.ctx.settle();
  return again;
}

describe('erased data is gone from every file under DATA_DIR (issue acceptance; spec States: User, Deletion job: done; Provider erasure)', () => {
  it('after a user deletion no file holds a value, text or uuid of the deleted user, after the job and after a restart; the other user’s are still found', { timeout: 120_000 }, async () => {
    const dataDir = tempDir('wellstream-scan-user-');
    let t = await start(dataDir);
    const tenant = await t.createTenant('scan');
    const gone = await markedUser(t, tenant, 'GONE');
    const kept = await markedUser(t, tenant, 'KEPT');
    const goneMarkers = mergeMarkers(gone.a, gone.b);
    const keptMarkers = mergeMarkers(kept.a, kept.b);
    expect(goneMarkers.uuids.length).toBeGreaterThan(40);
    expect(goneMarkers.values.length).toBeGreaterThan(40);
    // The scan finds every marker while the data is there.
    expect(missingFrom(dataDir, goneMarkers)).toEqual([]);
    expect(missingFrom(dataDir, keptMarkers)).toEqual([]);

    const job = await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, gone.id));
    expect(job.status).toBe('done');
    // No row names the user any more (a marker found below is then a leftover of a deleted row).
    expect(liveRowsOf(dataDir, gone.id)).toEqual([]);
    expect(liveRowsOf(dataDir, kept.id).length).toBeGreaterThan(0);
    expect(scanFiles(dataDir, goneMarkers)).toEqual([]);
    expect(missingFrom(dataDir, keptMarkers)).toEqual([]);

    t = await restart(t, dataDir);
    expect(scanFiles(dataDir, goneMarkers)).toEqual([]);
    expect(missingFrom(dataDir, keptMarkers)).toEqual([]);
    // And the service still serves the other user.
    const samples = await t.call('GET', `/v1/users/${kept.id}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', view: 'all', limit: '1000' } });
    expect((samples.json() as { data: unknown[] }).data).toHaveLength(kept.a.values.length);
  });

  it('after a provider erasure no file holds a value, text or uuid of that provider’s data, after the job and after a restart; the user’s other provider and another user are still found', { timeout: 120_000 }, async () => {
    const dataDir = tempDir('wellstream-scan-provider-');
    let t = await start(dataDir);
    const tenant = await t.createTenant('scan');
    const user = await markedUser(t, tenant, 'ERASED');
    const other = await markedUser(t, tenant, 'OTHER');
    expect(missingFrom(dataDir, user.a)).toEqual([]);

    const res = await t.call('DELETE', `/v1/users/${user.id}/data/device-a`, { key: tenant.apiKey });
    expect(res.statusCode, res.body).toBe(202);
    const job = await t.waitForDeletion(tenant.apiKey, (res.json() as { job_id: string }).job_id);
    expect(job).toMatchObject({ status: 'done', provider: 'device-a', user_id: user.id });
    expect(scanFiles(dataDir, user.a)).toEqual([]);
    expect(missingFrom(dataDir, mergeMarkers(user.b, other.a, other.b))).toEqual([]);

    t = await restart(t, dataDir);
    expect(scanFiles(dataDir, user.a)).toEqual([]);
    expect(missingFrom(dataDir, mergeMarkers(user.b, other.a, other.b))).toEqual([]);
  });
});

const DAY_MS = 86_400_000;
/** The read-model database, its write-ahead log counted with it. */
const readModelsFile = (file: string) => file.replace(/-wal$/, '');

describe('personal data outside the records is gone from every file under DATA_DIR after a user deletion (issue 20, finding 4)', () => {
  let sandbox: Sandbox | undefined;
  let receiver: Receiver | undefined;
  afterAll(async () => {
    await receiver?.close();
    await sandbox?.close();
  });

  it('no file holds the deleted user’s external_ref, tag label and note, consent evidence, consent redirect, provider user id or webhook deliveries; the user.deleted webhook carries the external_ref until retention purges it; the other user’s are still found', { timeout: 180_000 }, async () => {
    sandbox = await startSandbox();
    receiver = await Receiver.start();
    const env = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', PUBLIC_BASE_URL: 'https://health.example.com', ...sandboxSettings(sandbox, ['oura']) };
    const dataDir = tempDir('wellstream-scan-profile-');
    let t = await start(dataDir, env);
    const tenant = await t.createTenant('scan');
    const path = `/${randomUUID()}`;
    const endpoint = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: receiver.url(path) } });
    expectStatus(endpoint, 201);
    const { id: endpointId, secret } = endpoint.json() as { id: string; secret: string };
    receiver.trust(path, secret);

    const gone = await profiledUser(t, tenant, receiver, path, 'GONE', 'oura');
    const kept = await profiledUser(t, tenant, receiver, path, 'KEPT');
    const ref = { texts: [gone.externalRef], uuids: [], values: [] };
    expect(gone.webhookIds.length).toBeGreaterThanOrEqual(4);
    // The scan finds every marker while the user is there, in the read models only: the log holds them sealed.
    expect(missingFrom(dataDir, mergeMarkers(gone.markers, ref))).toEqual([]);
    expect(missingFrom(dataDir, kept.markers)).toEqual([]);
    expect(new Set(scanFiles(dataDir, mergeMarkers(gone.markers, ref, kept.markers)).map((f) => readModelsFile(f.file)))).toEqual(new Set(['readmodels.sqlite']));
    expect(scanFiles(dataDir, gone.sealedOnly)).toEqual([]);
    expect(gone.sealedOnly.texts.length).toBeGreaterThan(0);

    const jobId = await t.deleteUser(tenant.apiKey, gone.id);
    expect((await t.waitForDeletion(tenant.apiKey, jobId, 60_000)).status).toBe('done');
    // The announcement still names the user by the tenant's reference, read before its key went.
    await receiver.waitFor(() => receiver!.at(path).some((r) => r.verified?.type === 'user.deleted'), 30_000);
    const announced = receiver.at(path).find((r) => r.verified?.type === 'user.deleted')!;
    expect(announced.verified!.data).toEqual({ user_id: gone.id, external_ref: gone.externalRef, job_id: jobId });
    await t.ctx.readStore.purgeDeleted?.();

    expect(scanFiles(dataDir, gone.markers)).toEqual([]);
    // The external_ref is left only in the user.deleted delivery, kept like every delivery until retention.
    expect(new Set(scanFiles(dataDir, ref).map((f) => readModelsFile(f.file)))).toEqual(new Set(['readmodels.sqlite']));
    const listed = await t.call('GET', `/v1/webhooks/${endpointId}/deliveries`, { key: tenant.apiKey, query: { limit: '1000' } });
    expectStatus(listed, 200);
    const about = (listed.json() as { data: { event_type: string; payload: { data: { user_id?: string } } }[] }).data.filter((d) => d.payload.data.user_id === gone.id);
    expect(about.map((d) => d.event_type)).toEqual(['user.deleted']);
    expect(missingFrom(dataDir, mergeMarkers(kept.markers, { texts: [kept.externalRef], uuids: [], values: [] }))).toEqual([]);

    // Retention: once the deliveries are older than WEBHOOK_DELIVERY_RETENTION_DAYS (30), the purge takes them.
    await eventually(async () => {
      const res = await t.call('GET', `/v1/webhooks/${endpointId}/deliveries`, { key: tenant.apiKey, query: { status: 'done', limit: '1000' } });
      return (res.json() as { data: { event_type: string }[] }).data.some((d) => d.event_type === 'user.deleted');
    });
    expect(await t.ctx.webhooks.purgeExpiredDeliveries(Date.now() + 31 * DAY_MS)).toBeGreaterThan(0);
    await t.ctx.readStore.purgeDeleted?.();
    expect(scanFiles(dataDir, mergeMarkers(gone.markers, ref))).toEqual([]);

    t = await restart(t, dataDir, env);
    expect(scanFiles(dataDir, mergeMarkers(gone.markers, ref))).toEqual([]);
    // The other user's personal data still reads back in the clear.
    const user = await t.call('GET', `/v1/users/${kept.id}`, { key: tenant.apiKey });
    expect((user.json() as { external_ref: string }).external_ref).toBe(kept.externalRef);
  });
});
