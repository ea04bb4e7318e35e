import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { recordProjections } from '../../projections/index.js';
import { UPLOADS, type UploadDoc } from '../../projections/ingestion/uploadsProjection.js';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import { expectStatus, gate, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { eventually, Receiver } from '../webhooks/receiver.js';
import { coverage, fixtureA, postUpload, requestFor } from './uploadHelpers.js';

/**
 * contracts §17 (issue 36 point 5): an Upload is `done`, and `upload.finished` is sent, only when its
 * records are readable in every view. The record projections run on the thread that answers here
 * (PROJECTOR_THREAD=false), so the test can hold them back: their batches wait behind a gate while
 * the ETL finishes the upload and the Upload read model records its end.
 */
let t: TestApp;
let r: Receiver;

beforeAll(async () => {
  t = await startTestApp({ PROJECTOR_THREAD: 'false', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  r = await Receiver.start();
});
afterAll(async () => {
  vi.restoreAllMocks();
  await t?.close();
  await r?.close();
});

const RECORD_VIEWS = new Set(recordProjections.map((p) => p.name));

/** Every record projection's batches wait until the gate opens; the other read models go on. */
function holdRecordViews(): { open: () => void } {
  const g = gate();
  const store = t.ctx.readStore;
  const real = store.applyBatch.bind(store);
  const spy = vi.spyOn(store, 'applyBatch').mockImplementation(async (batch) => {
    if (RECORD_VIEWS.has(batch.projection)) await g.promise;
    return real(batch);
  });
  return {
    open: () => {
      spy.mockRestore();
      g.open();
    },
  };
}

async function uploadOf(tenant: TenantHandle, userId: string, uploadId: string, query: Record<string, string> = {}): Promise<UploadResource> {
  const res = await t.call('GET', `/v1/users/${userId}/uploads/device-a/${uploadId}`, { key: tenant.apiKey, query });
  expectStatus(res, 200);
  return res.json() as UploadResource;
}

async function listed(tenant: TenantHandle, userId: string, status: string): Promise<string[]> {
  const res = await t.call('GET', `/v1/users/${userId}/uploads`, { key: tenant.apiKey, query: { status } });
  expectStatus(res, 200);
  return (res.json() as { data: UploadResource[] }).data.map((u) => u.upload_id);
}

type DeliveryRow = { id: number; status: string; attempts: number; event_type: string };

async function deliveries(tenant: TenantHandle, endpointId: string): Promise<DeliveryRow[]> {
  const res = await t.call('GET', `/v1/webhooks/${endpointId}/deliveries`, { key: tenant.apiKey, query: { limit: '100' } });
  expectStatus(res, 200);
  return (res.json() as { data: DeliveryRow[] }).data;
}

describe('an Upload is done only when its records are readable in every view (contracts §17)', { timeout: 120_000 }, () => {
  it('answers processing and holds upload.finished while the record views lag; once they catch up it is done, the counts read back and the webhook goes out', async () => {
    const tenant = await t.createTenant(`readable-${randomUUID().slice(0, 8)}`);
    const path = `/${randomUUID()}`;
    const created = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: r.url(path), event_types: ['upload.finished'] } });
    expectStatus(created, 201);
    const endpoint = created.json() as { id: string; secret: string };
    r.trust(path, endpoint.secret);
    const user = await t.createUser(tenant.apiKey);
    const { token } = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });

    const held = holdRecordViews();
    // A failing assertion must not leave the projections held: the service could not stop.
    onTestFinished(() => held.open());
    const uploadId = `held-${randomUUID()}`;
    expectStatus(await postUpload(t, 'device-a', token, uploadId, requestFor('device-a', fixtureA())), 202);
    // The ETL finished: the Upload read model holds its end, and the dispatcher wrote the webhook's delivery.
    const stored = await eventually(async () => {
      const [doc] = await t.ctx.readStore.find<UploadDoc>(UPLOADS, { filter: { user_id: user.id, upload_id: uploadId } });
      return doc?.status === 'done' ? doc : null;
    }, 60_000);
    const finished = await eventually(async () => (await deliveries(tenant, endpoint.id)).find((d) => d.event_type === 'upload.finished'));

    const waiting = await uploadOf(tenant, user.id, uploadId);
    expect(waiting).toMatchObject({ status: 'processing', finished_at: null, error: null, progress: { bytes_read: stored.bytes, bytes_total: stored.bytes } });
    expect(await listed(tenant, user.id, 'done')).toEqual([]);
    expect(await listed(tenant, user.id, 'processing')).toEqual([uploadId]);

    // A test delivery dispatched after upload.finished goes out; upload.finished, ahead of it, has not.
    expectStatus(await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey }), 202);
    await r.waitFor(() => r.at(path).some((x) => x.verified?.type === 'webhook.test'));
    expect(r.at(path).filter((x) => x.verified?.type === 'upload.finished')).toEqual([]);
    expect((await deliveries(tenant, endpoint.id)).find((d) => d.id === finished.id)).toMatchObject({ status: 'pending', attempts: 0 });

    held.open();
    const done = await eventually(async () => {
      const u = await uploadOf(tenant, user.id, uploadId);
      return u.status === 'done' ? u : null;
    }, 60_000);
    // Read at once, without waiting for the projectors: every view has the upload's records.
    const cov = await coverage(t, tenant.apiKey, user.id);
    expect(cov.days.reduce((n, d) => n + d.records, 0)).toBe(Object.values(done.records).reduce((n, c) => n + c, 0));
    expect(cov.rejected_records).toBe(done.rejected);
    expect(done.finished_at).not.toBeNull();
    expect(done.progress).toBeNull();
    expect(await listed(tenant, user.id, 'done')).toEqual([uploadId]);
    expect(await listed(tenant, user.id, 'processing')).toEqual([]);

    await r.waitFor(() => r.at(path).some((x) => x.verified?.type === 'upload.finished'));
    const sent = r.at(path).find((x) => x.verified?.type === 'upload.finished')!.verified as { data: { status: string; records: Record<string, number> } };
    expect(sent.data).toMatchObject({ status: 'done', records: done.records });
  });
});
