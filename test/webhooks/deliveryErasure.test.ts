import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadMarked } from '../erasure/markedData.js';
import { fixtureA, fixtureB } from '../ingest/uploadHelpers.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { eventually, Receiver } from './receiver.js';

/**
 * Issue 20, finding 4: webhook deliveries name the user, the external_ref, record types and days,
 * so they go with what they describe (docs/erasure.md, docs/webhooks.md "Retention"). Seen
 * through the deliveries API of the tenant's endpoint.
 */
let t: TestApp;
let r: Receiver;
let tenant: TenantHandle;
let endpointId: string;

type Delivery = { id: number; event_type: string; payload: { data: { user_id?: string; provider?: string; external_ref?: string | null } } };

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  r = await Receiver.start();
  tenant = await t.createTenant('deliveries');
  const path = `/${randomUUID()}`;
  const res = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: r.url(path) } });
  expectStatus(res, 201);
  endpointId = (res.json() as { id: string }).id;
});
afterAll(async () => {
  await t?.close();
  await r?.close();
});

async function deliveriesAbout(userId: string): Promise<Delivery[]> {
  const res = await t.call('GET', `/v1/webhooks/${endpointId}/deliveries`, { key: tenant.apiKey, query: { limit: '1000' } });
  expectStatus(res, 200);
  return (res.json() as { data: Delivery[] }).data.filter((d) => d.payload.data.user_id === userId).reverse();
}

const kinds = (ds: Delivery[]) => ds.map((d) => `${d.event_type}${d.payload.data.provider ? `/${d.payload.data.provider}` : ''}`).sort();

async function userWithData(ref: string): Promise<string> {
  const user = await t.createUser(tenant.apiKey, { external_ref: ref });
  await uploadMarked(t, tenant.apiKey, user.id, 'device-a', fixtureA());
  await uploadMarked(t, tenant.apiKey, user.id, 'device-b', fixtureB());
  await eventually(async () => (await deliveriesAbout(user.id)).length === 5);
  return user.id;
}

describe('webhook deliveries go with what they describe (issue 20)', () => {
  it('a provider erasure deletes that provider’s data.written deliveries of the user; the other provider’s and the user’s stay, and data.erased is delivered with the external_ref', { timeout: 60_000 }, async () => {
    const userId = await userWithData('patient-erase-1');
    const other = await userWithData('patient-erase-2');
    expect(kinds(await deliveriesAbout(userId))).toEqual(['data.written/device-a', 'data.written/device-b', 'upload.finished/device-a', 'upload.finished/device-b', 'user.created']);

    const res = await t.call('DELETE', `/v1/users/${userId}/data/device-a`, { key: tenant.apiKey });
    expectStatus(res, 202);
    expect((await t.waitForDeletion(tenant.apiKey, (res.json() as { job_id: string }).job_id, 30_000)).status).toBe('done');
    const after = await eventually(async () => {
      const ds = await deliveriesAbout(userId);
      return ds.some((d) => d.event_type === 'data.erased') ? ds : null;
    });
    expect(kinds(after)).toEqual(['data.erased/device-a', 'data.written/device-b', 'upload.finished/device-b', 'user.created']);
    expect(after.find((d) => d.event_type === 'data.erased')!.payload.data.external_ref).toBe('patient-erase-1');
    expect(kinds(await deliveriesAbout(other))).toEqual(['data.written/device-a', 'data.written/device-b', 'upload.finished/device-a', 'upload.finished/device-b', 'user.created']);
  });

  it('a user deletion deletes every delivery about the user but user.deleted, which carries the external_ref; another user’s stay', { timeout: 60_000 }, async () => {
    const userId = await userWithData('patient-delete-1');
    const other = await userWithData('patient-delete-2');
    const tag = await t.call('POST', `/v1/users/${userId}/tags`, { key: tenant.apiKey, body: { kind: 'travel', label: 'trip', start: '2026-11-01T00:00:00Z' } });
    expectStatus(tag, 201);
    await eventually(async () => (await deliveriesAbout(userId)).some((d) => d.event_type === 'tag.created'));

    expect((await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, userId), 30_000)).status).toBe('done');
    const after = await deliveriesAbout(userId);
    expect(kinds(after)).toEqual(['user.deleted']);
    expect(after[0]!.payload.data).toMatchObject({ user_id: userId, external_ref: 'patient-delete-1' });
    expect(kinds(await deliveriesAbout(other))).toEqual(['data.written/device-a', 'data.written/device-b', 'upload.finished/device-a', 'upload.finished/device-b', 'user.created']);
  });
});
