import { afterAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/shared/secrets.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';
import { markedHealthConnect, markedHealthKit, markersOf, mergeMarkers, missingFrom, scanFiles, uploadMarked, type Markers } from './markedData.js';

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
const start = async (dataDir: string) => {
  const t = await startTestApp({ DATA_DIR: dataDir, ADMIN_API_KEY });
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

async function restart(t: TestApp, dataDir: string): Promise<TestApp> {
  await t.close();
  started.splice(started.indexOf(t), 1);
  const again = await start(dataDir);
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
