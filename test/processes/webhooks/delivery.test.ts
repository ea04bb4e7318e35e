import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { UploadEvent } from '../../../commands/ingestion/upload.js';
import type { Event } from '../../../src/eventstore/eventStore.js';
import type { DeliveryDoc } from '../../../src/webhooks/deliveryDocs.js';
import { fixtureB, postUpload, requestFor, waitForEtl } from '../../ingest/uploadHelpers.js';
import { createJob } from '../../server/records/pipelineFixtures.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../../support/server.js';
import { eventually, Receiver, type Received } from '../../webhooks/receiver.js';

/**
 * Deliveries to real HTTP receivers on 127.0.0.1, every one verified with the `standardwebhooks`
 * library (contracts §5). The retry schedule is compressed (WEBHOOK_RETRY_SCHEDULE) so the whole
 * run to parking takes about two seconds.
 */
const SCHEDULE = [0, 0.1, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3];
let clockOffsetMs = 0;
let t: TestApp;
let r: Receiver;

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(',') }, { webhookClock: () => Date.now() + clockOffsetMs });
  r = await Receiver.start();
});
afterAll(async () => {
  await t?.close();
  await r?.close();
});

type Endpoint = { id: string; secret: string; url: string; status: string; disabled_reason: string | null; failing_since: string | null; last_success_at: string | null };
/** A delivery as the API answers it: the stored document less its keys, with the body parsed. */
type Delivery = Omit<DeliveryDoc, '_id' | 'endpoint_id' | 'tenant_id' | 'replayed_at' | 'payload'> & {
  payload: { id: string; type: string; timestamp: string; test: boolean; data: Record<string, unknown> };
};

/** A tenant with one endpoint on its own path of the receiver, trusted with its secret. */
async function setup(body: Record<string, unknown> = {}): Promise<{ tenant: TenantHandle; endpoint: Endpoint; path: string }> {
  const tenant = await t.createTenant(`t-${randomUUID().slice(0, 8)}`);
  const path = `/${randomUUID()}`;
  const endpoint = await addEndpoint(tenant, path, body);
  return { tenant, endpoint, path };
}

async function addEndpoint(tenant: TenantHandle, path: string, body: Record<string, unknown> = {}): Promise<Endpoint> {
  const res = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: r.url(path), ...body } });
  expectStatus(res, 201);
  const endpoint = res.json() as Endpoint;
  r.trust(path, endpoint.secret);
  return endpoint;
}

async function deliveries(tenant: TenantHandle, endpointId: string, query: Record<string, string> = {}): Promise<Delivery[]> {
  const res = await t.call('GET', `/v1/webhooks/${endpointId}/deliveries`, { key: tenant.apiKey, query: { limit: '1000', ...query } });
  expectStatus(res, 200);
  return (res.json() as { data: Delivery[] }).data;
}

async function delivery(tenant: TenantHandle, endpointId: string, id: number): Promise<Delivery> {
  const res = await t.call('GET', `/v1/webhooks/${endpointId}/deliveries/${id}`, { key: tenant.apiKey });
  expectStatus(res, 200);
  return res.json() as Delivery;
}

/** Waits until the delivery satisfies `check`; answers it then. */
function deliveryWhen(tenant: TenantHandle, endpointId: string, id: number, check: (d: Delivery) => boolean): Promise<Delivery> {
  return eventually(async () => {
    const d = await delivery(tenant, endpointId, id);
    return check(d) ? d : null;
  });
}

/** Waits until some delivery of the endpoint satisfies `check`. */
function deliveryWhere(tenant: TenantHandle, endpointId: string, check: (d: Delivery) => boolean): Promise<Delivery> {
  return eventually(async () => (await deliveries(tenant, endpointId)).find(check));
}

const verifiedAt = (path: string): Received[] => r.at(path).filter((x) => x.verified !== null);

function expectAllVerified(path: string): void {
  const bad = r.at(path).filter((x) => x.verified === null);
  expect(bad.map((x) => x.verifyError)).toEqual([]);
}

describe('the event catalog (contracts §8), each type from the domain event that means it', () => {
  it('user.created: data user_id and external_ref; signed per Standard Webhooks; webhook-id = payload id = delivery event_id', async () => {
    const { tenant, endpoint, path } = await setup();
    const user = await t.createUser(tenant.apiKey, { external_ref: 'ext-1' });
    await r.waitFor(() => verifiedAt(path).length === 1);
    expectAllVerified(path);
    const got = r.at(path)[0]!;
    const body = JSON.parse(got.body) as Delivery['payload'];
    expect(body).toEqual({ id: expect.any(String), type: 'user.created', timestamp: expect.any(String), test: false, data: { user_id: user.id, external_ref: 'ext-1' } });
    expect(got.headers['webhook-id']).toBe(body.id);
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(got.headers['content-type']).toBe('application/json');
    const [d] = await deliveries(tenant, endpoint.id);
    expect(d).toMatchObject({ event_id: body.id, event_type: 'user.created', payload: body });
  });

  it('user.deleted: data user_id, external_ref and job_id, once the deletion job has erased the user', async () => {
    const { tenant, path } = await setup({ event_types: ['user.deleted'] });
    const user = await t.createUser(tenant.apiKey, { external_ref: 'leaving' });
    const jobId = await t.deleteUser(tenant.apiKey, user.id);
    await r.waitFor(() => verifiedAt(path).length === 1);
    expectAllVerified(path);
    expect(JSON.parse(r.at(path)[0]!.body)).toMatchObject({ type: 'user.deleted', test: false, data: { user_id: user.id, external_ref: 'leaving', job_id: jobId } });
  });

  it('data.written: data user_id, external_ref, provider, records, types, first_day, last_day after an upload is stored', async () => {
    const { tenant, path } = await setup({ event_types: ['data.written'] });
    const user = await t.createUser(tenant.apiKey, { external_ref: 'uploader' });
    const token = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
    expectStatus(await postUpload(t, 'device-b', token.token, `up-${randomUUID()}`, requestFor('device-b', fixtureB())), 202);
    await waitForEtl(t, tenant.apiKey, user.id);
    await r.waitFor(() => verifiedAt(path).length === 1);
    expectAllVerified(path);
    const body = JSON.parse(r.at(path)[0]!.body) as Delivery['payload'];
    expect(body).toMatchObject({ type: 'data.written', test: false, data: { user_id: user.id, external_ref: 'uploader', provider: 'device-b' } });
    expect(Object.values(body.data.records as Record<string, number>).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(Array.isArray(body.data.types)).toBe(true);
    expect(body.data.first_day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(body.data.last_day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('upload.finished (contracts §12): data user_id, external_ref, provider, upload_id, status, records, unchanged, rejected once the upload is done', async () => {
    const { tenant, path } = await setup({ event_types: ['upload.finished'] });
    const user = await t.createUser(tenant.apiKey, { external_ref: 'finisher' });
    const token = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
    const uploadId = `up-${randomUUID()}`;
    expectStatus(await postUpload(t, 'device-b', token.token, uploadId, requestFor('device-b', fixtureB())), 202);
    await waitForEtl(t, tenant.apiKey, user.id);
    await r.waitFor(() => verifiedAt(path).length === 1);
    expectAllVerified(path);
    const body = JSON.parse(r.at(path)[0]!.body) as Delivery['payload'];
    expect(body).toMatchObject({ type: 'upload.finished', test: false, data: { user_id: user.id, external_ref: 'finisher', provider: 'device-b', upload_id: uploadId, status: 'done', unchanged: 0 } });
    expect(Object.keys(body.data).sort()).toEqual(['external_ref', 'provider', 'records', 'rejected', 'status', 'unchanged', 'upload_id', 'user_id']);
    expect(body.data.rejected).toBeGreaterThan(0);
  });

  it('sync.failed: a failed processing attempt (with retry_at) and a parked one (retry_at null)', async () => {
    const { tenant, path } = await setup({ event_types: ['sync.failed'] });
    // The jobs below are written as events by hand, with raw objects that do not exist: no runner may take them up.
    await t.ctx.jobs.stop();
    onTestFinished(() => t.ctx.jobs.start());
    const user = await t.createUser(tenant.apiKey, { external_ref: 'failing' });
    const who = { userId: user.id, tenantId: tenant.id };
    await createJob(t, who, 'device-a', 'parked');
    const stream = `upload-${user.id}-${randomUUID().replace(/-/g, '')}`;
    const base = { user_id: user.id, tenant_id: tenant.id };
    const events: UploadEvent[] = [
      {
        type: 'upload.accepted',
        data: { ...base, upload_id: randomUUID(), provider: 'device-c', object_key: 'raw/x', sha256: '0'.repeat(64), bytes: 1, content_type: 'application/octet-stream', tier: 'upload', accepted_at: '2026-11-03T10:00:00.000Z', token_id: randomUUID() },
      },
      { type: 'etl.job_started', data: { ...base, attempt: 1, worker: 'test', started_at: '2026-11-03T10:00:00.000Z', lease_until: '2999-01-01T00:00:00.000Z' } },
      { type: 'etl.job_failed', data: { ...base, attempt: 1, error: 'database is locked', failed_at: '2026-11-03T10:00:01.000Z', next_attempt_at: '2999-01-01T00:00:00.000Z' } },
    ];
    await t.ctx.eventStore.appendToStream(stream, events as unknown as Event[]);
    await r.waitFor(() => verifiedAt(path).length === 2);
    expectAllVerified(path);
    const bodies = r.at(path).map((x) => JSON.parse(x.body) as Delivery['payload']);
    expect(bodies[0]).toMatchObject({
      type: 'sync.failed',
      data: { user_id: user.id, external_ref: 'failing', provider: 'device-a', reason: 'processing_parked', last_error: 'payload unreadable', consecutive_failures: 5, retry_at: null },
    });
    expect(bodies[1]).toMatchObject({
      type: 'sync.failed',
      data: { user_id: user.id, provider: 'device-c', reason: 'processing_failed', last_error: 'database is locked', consecutive_failures: 1, retry_at: '2999-01-01T00:00:00.000Z' },
    });
  });

  it('data.erased: data user_id, external_ref, provider, job_id, records_deleted when a provider-data erasure job ends', async () => {
    const { tenant, path } = await setup({ event_types: ['data.erased'] });
    const user = await t.createUser(tenant.apiKey, { external_ref: 'erasing' });
    const token = await t.mintToken(tenant.apiKey, user.id, { scopes: ['upload'] });
    expectStatus(await postUpload(t, 'device-b', token.token, `up-${randomUUID()}`, requestFor('device-b', fixtureB())), 202);
    await waitForEtl(t, tenant.apiKey, user.id);
    const res = await t.call('DELETE', `/v1/users/${user.id}/data/device-b`, { key: tenant.apiKey });
    expectStatus(res, 202);
    const jobId = (res.json() as { job_id: string }).job_id;
    await t.waitForDeletion(tenant.apiKey, jobId);
    await r.waitFor(() => verifiedAt(path).length === 1);
    expectAllVerified(path);
    const body = JSON.parse(r.at(path)[0]!.body) as Delivery['payload'];
    expect(body).toMatchObject({ type: 'data.erased', test: false, data: { user_id: user.id, external_ref: 'erasing', provider: 'device-b', job_id: jobId } });
    expect(body.data.records_deleted).toBeGreaterThan(0);
  });

  it('webhook.test: POST /test answers 202 with the delivery of an event whose test is true (contracts §8)', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['user.created'] });
    const res = await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey });
    expectStatus(res, 202);
    const d = res.json() as Delivery;
    expect(d).toMatchObject({ event_type: 'webhook.test', replay_of: null, payload: { id: d.event_id, type: 'webhook.test', test: true, data: { endpoint_id: endpoint.id } } });
    await r.waitFor(() => verifiedAt(path).length === 1);
    expectAllVerified(path);
    expect(r.at(path)[0]!.headers['webhook-id']).toBe(d.event_id);
    const done = await deliveryWhen(tenant, endpoint.id, d.id, (now) => now.status === 'done');
    expect(done).toMatchObject({ attempts: 1, last_status_code: 204, last_error: null, next_attempt_at: null, delivered_at: expect.any(String) });
    expect(done.attempt_history).toEqual([
      { id: expect.any(Number), attempt: 1, started_at: expect.any(String), duration_ms: expect.any(Number), status_code: 204, error: null, response_body_excerpt: '' },
    ]);
    const health = (await t.call('GET', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey })).json() as Endpoint;
    expect(health.last_success_at).not.toBeNull();
    expect(health.failing_since).toBeNull();
  });

  it('sends only the types an endpoint asked for; an endpoint without types gets every type (Events 1)', async () => {
    const { tenant, path: onlyDeleted } = await setup({ event_types: ['user.deleted'] });
    const everything = `/${randomUUID()}`;
    await addEndpoint(tenant, everything);
    const user = await t.createUser(tenant.apiKey);
    await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, user.id));
    await r.waitFor(() => verifiedAt(everything).length === 2 && verifiedAt(onlyDeleted).length === 1);
    expect(r.at(everything).map((x) => JSON.parse(x.body).type)).toEqual(['user.created', 'user.deleted']);
    expect(r.at(onlyDeleted).map((x) => JSON.parse(x.body).type)).toEqual(['user.deleted']);
  });

  it("never sends one tenant's events to another tenant's endpoint (tenant isolation)", async () => {
    const a = await setup();
    const b = await setup();
    await t.createUser(a.tenant.apiKey, { external_ref: 'only-a' });
    await t.createUser(b.tenant.apiKey, { external_ref: 'only-b' });
    await r.waitFor(() => verifiedAt(a.path).length === 1 && verifiedAt(b.path).length === 1);
    // A later event of b's reaching b proves a's had its chance to arrive, had it been routed wrongly.
    const probe = await t.call('POST', `/v1/webhooks/${b.endpoint.id}/test`, { key: b.tenant.apiKey });
    await r.waitFor(() => verifiedAt(b.path).length === 2);
    expect(probe.statusCode).toBe(202);
    expect(r.at(a.path).map((x) => JSON.parse(x.body).data.external_ref)).toEqual(['only-a']);
    expect(r.at(b.path).map((x) => JSON.parse(x.body).data.external_ref ?? 'test')).toEqual(['only-b', 'test']);
  });
});

describe('retries, parking and replay (spec "Webhook delivery"; contracts §5)', () => {
  it('retries a receiver that is down and delivers once it is back; failing_since set while failing, cleared after', async () => {
    const down = await Receiver.start();
    try {
      const tenant = await t.createTenant('down-then-up');
      const path = '/back';
      const res = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: down.url(path), event_types: ['webhook.test'] } });
      const endpoint = res.json() as Endpoint;
      down.trust(path, endpoint.secret);
      await down.down();
      const test = (await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey })).json() as Delivery;
      const failing = await deliveryWhen(tenant, endpoint.id, test.id, (d) => d.attempts >= 2);
      expect(failing.status).toMatch(/pending|running/);
      expect(failing.attempt_history[0]).toMatchObject({ attempt: 1, status_code: null, error: 'connection refused' });
      expect((await t.call('GET', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey })).json()).toMatchObject({ failing_since: expect.any(String) });
      await down.up();
      await down.waitFor((all) => all.some((x) => x.verified !== null));
      const done = await deliveryWhen(tenant, endpoint.id, test.id, (d) => d.status === 'done');
      expect(done.attempts).toBeGreaterThanOrEqual(3);
      expect(done.attempts).toBeLessThan(8);
      expect(down.received.every((x) => x.body === JSON.stringify(test.payload))).toBe(true);
      expect((await t.call('GET', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey })).json()).toMatchObject({ failing_since: null, last_success_at: expect.any(String) });
    } finally {
      await down.close();
    }
  });

  it('runs the whole schedule, sending the exact same body each time, and parks after the 8th failure (Events 2, 3)', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['webhook.test'] });
    r.answer = (x) => (x.path === path ? { status: 500, body: 'x'.repeat(3000) } : { status: 204 });
    try {
      const test = (await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey })).json() as Delivery;
      const parked = await deliveryWhen(tenant, endpoint.id, test.id, (d) => d.status === 'parked');
      expect(parked).toMatchObject({ attempts: 8, last_status_code: 500, last_error: 'receiver answered 500', next_attempt_at: null, delivered_at: null });
      expect(parked.attempt_history.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(new Set(parked.attempt_history.map((a) => a.id)).size).toBe(8);
      expect(parked.attempt_history.every((a) => a.status_code === 500 && a.response_body_excerpt === 'x'.repeat(1024))).toBe(true);
      expect(r.at(path)).toHaveLength(8);
      expectAllVerified(path);
      expect(new Set(r.at(path).map((x) => x.body)).size).toBe(1);
      expect(new Set(r.at(path).map((x) => x.headers['webhook-id'])).size).toBe(1);
      // Each attempt came no sooner than the schedule says after the one before it.
      const starts = parked.attempt_history.map((a) => Date.parse(a.started_at));
      for (let i = 1; i < 8; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(SCHEDULE[i]! * 1000 - 5);
      // Not disabled: the endpoint is younger than 5 days.
      expect((await t.call('GET', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey })).json()).toMatchObject({ status: 'active' });
      expect(await deliveries(tenant, endpoint.id, { status: 'parked' })).toHaveLength(1);
      expect(await deliveries(tenant, endpoint.id, { status: 'done' })).toHaveLength(0);
    } finally {
      r.answer = () => ({ status: 204 });
    }
  });

  it('replays a parked delivery: 202 with a new delivery of the same event and payload, replay_of set, and it is delivered (Events 4)', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['webhook.test'] });
    r.answer = (x) => (x.path === path ? { status: 503 } : { status: 204 });
    const test = (await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey })).json() as Delivery;
    await eventually(async () => (await delivery(tenant, endpoint.id, test.id)).status === 'parked');
    r.answer = () => ({ status: 204 });
    const res = await t.call('POST', `/v1/webhooks/${endpoint.id}/deliveries/${test.id}/replay`, { key: tenant.apiKey });
    expectStatus(res, 202);
    const replay = res.json() as Delivery;
    expect(replay).toMatchObject({ event_id: test.event_id, event_type: 'webhook.test', replay_of: test.id, payload: test.payload, attempts: 0, attempt_history: [] });
    expect(replay.id).not.toBe(test.id);
    await eventually(async () => (await delivery(tenant, endpoint.id, replay.id)).status === 'done');
    expect(r.at(path).at(-1)!.headers['webhook-id']).toBe(test.event_id);
    expect(r.at(path).at(-1)!.body).toBe(JSON.stringify(test.payload));
    expectAllVerified(path);
    expect((await delivery(tenant, endpoint.id, test.id)).status).toBe('parked');
    const list = await deliveries(tenant, endpoint.id);
    expect(list.map((d) => d.id)).toEqual([replay.id, test.id]);
  });

  it('recovers after an outage: every parked delivery since a time is replayed once, and the answer says how many', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['webhook.test'] });
    const since = new Date(Date.now() - 1000).toISOString();
    r.answer = (x) => (x.path === path ? 'drop' : { status: 204 });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey })).json() as Delivery).id);
    await eventually(async () => (await deliveries(tenant, endpoint.id, { status: 'parked' })).length === 3);
    r.answer = () => ({ status: 204 });
    const res = await t.call('POST', `/v1/webhooks/${endpoint.id}/recover`, { key: tenant.apiKey, body: { since } });
    expectStatus(res, 202);
    expect(res.json()).toEqual({ replayed: 3 });
    await eventually(async () => (await deliveries(tenant, endpoint.id, { status: 'done' })).length === 3);
    const done = await deliveries(tenant, endpoint.id, { status: 'done' });
    expect(done.map((d) => d.replay_of).sort()).toEqual([...ids].sort());
    expectAllVerified(path);
    // A second recovery finds nothing left to replay: each parked delivery is replayed once.
    expect((await t.call('POST', `/v1/webhooks/${endpoint.id}/recover`, { key: tenant.apiKey, body: { since } })).json()).toEqual({ replayed: 0 });
    // Since a later time: nothing.
    expect((await t.call('POST', `/v1/webhooks/${endpoint.id}/recover`, { key: tenant.apiKey, body: { since: new Date(Date.now() + 60_000).toISOString() } })).json()).toEqual({ replayed: 0 });
  });

  it('a recovery refuses a bad since (400), another tenant\'s endpoint (404) and a disabled endpoint (409), and enqueues nothing (issue 26: recovery is a job)', async () => {
    const { tenant, endpoint } = await setup({ event_types: ['webhook.test'] });
    const other = await setup({ event_types: ['webhook.test'] });
    const jobsBefore = (await t.ctx.jobs.queue.counts()).filter((c) => c.kind === 'webhook.recover');
    expectStatus(await t.call('POST', `/v1/webhooks/${endpoint.id}/recover`, { key: tenant.apiKey, body: { since: 'yesterday' } }), 400);
    expectStatus(await t.call('POST', `/v1/webhooks/${other.endpoint.id}/recover`, { key: tenant.apiKey, body: { since: new Date().toISOString() } }), 404);
    expectStatus(await t.call('PATCH', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey, body: { enabled: false } }), 200);
    expectStatus(await t.call('POST', `/v1/webhooks/${endpoint.id}/recover`, { key: tenant.apiKey, body: { since: new Date(0).toISOString() } }), 409);
    expect((await t.ctx.jobs.queue.counts()).filter((c) => c.kind === 'webhook.recover')).toEqual(jobsBefore);
  });

  it("honours a receiver's Retry-After on 429 within the schedule (the next attempt waits at least that long)", async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['webhook.test'] });
    r.answer = (x) => (x.path === path ? { status: 429, headers: { 'retry-after': '1' } } : { status: 204 });
    try {
      const test = (await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey })).json() as Delivery;
      const d = await deliveryWhen(tenant, endpoint.id, test.id, (now) => now.attempts >= 1 && now.next_attempt_at !== null);
      const first = d.attempt_history[0]!;
      expect(first.status_code).toBe(429);
      // The schedule says 0.1 s; the receiver asked for 1 s and the longest step is 0.3 s: 0.3 s it is.
      expect(Date.parse(d.next_attempt_at!) - Date.parse(first.started_at)).toBeGreaterThanOrEqual(300);
    } finally {
      r.answer = () => ({ status: 204 });
    }
  });

  it('follows no redirect: a 3xx is a failed attempt and the Location is never requested', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['webhook.test'] });
    const elsewhere = `/${randomUUID()}`;
    r.answer = (x) => (x.path === path ? { status: 307, headers: { location: r.url(elsewhere) } } : { status: 204 });
    try {
      const test = (await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey })).json() as Delivery;
      const d = await deliveryWhen(tenant, endpoint.id, test.id, (now) => now.attempts >= 1);
      expect(d.attempt_history[0]).toMatchObject({ status_code: 307, error: 'receiver answered 307' });
      expect(d.status).not.toBe('done');
      expect(r.at(elsewhere)).toHaveLength(0);
      await t.call('PATCH', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey, body: { enabled: false } });
    } finally {
      r.answer = () => ({ status: 204 });
    }
  });

  it('reads a long answer only up to a bound and keeps its first 1 KiB (Webhook delivery: response_body_excerpt)', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['webhook.test'] });
    r.answer = (x) => (x.path === path ? { status: 200, body: 'é'.repeat(600_000) } : { status: 204 });
    try {
      const test = (await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey })).json() as Delivery;
      const d = await deliveryWhen(tenant, endpoint.id, test.id, (now) => now.status === 'done');
      expect(Buffer.byteLength(d.attempt_history[0]!.response_body_excerpt!)).toBeLessThanOrEqual(1024);
      expect(d.attempt_history[0]!.response_body_excerpt!.startsWith('é'.repeat(500))).toBe(true);
    } finally {
      r.answer = () => ({ status: 204 });
    }
  });
});

describe('endpoint states (spec "States: Webhook endpoint", "Webhook delivery"; contracts §8)', () => {
  it('PATCH enabled false parks pending deliveries; enabled true sends new events only', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['user.created'] });
    r.answer = (x) => (x.path === path ? 'drop' : { status: 204 });
    try {
      await t.createUser(tenant.apiKey, { external_ref: 'while-failing' });
      const pending = await deliveryWhere(tenant, endpoint.id, (d) => d.attempts >= 1);
      const off = await t.call('PATCH', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey, body: { enabled: false } });
      expect(off.json()).toMatchObject({ status: 'disabled' });
      const parked = await deliveryWhen(tenant, endpoint.id, pending.id, (d) => d.status === 'parked');
      expect(parked.attempts).toBeLessThan(8);
      r.answer = () => ({ status: 204 });
      await t.createUser(tenant.apiKey, { external_ref: 'while-disabled' });
      await t.call('PATCH', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey, body: { enabled: true } });
      await t.createUser(tenant.apiKey, { external_ref: 'after-enable' });
      await r.waitFor(() => verifiedAt(path).some((x) => JSON.parse(x.body).data.external_ref === 'after-enable'));
      const refs = (await deliveries(tenant, endpoint.id)).map((d) => d.payload.data.external_ref);
      expect(refs).toEqual(['after-enable', 'while-failing']);
      expect(r.at(path).some((x) => JSON.parse(x.body).data.external_ref === 'while-disabled')).toBe(false);
      expect((await delivery(tenant, endpoint.id, pending.id)).status).toBe('parked');
    } finally {
      r.answer = () => ({ status: 204 });
    }
  });

  it('DELETE parks the pending deliveries of the endpoint (contracts §8)', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['user.created'] });
    r.answer = (x) => (x.path === path ? 'drop' : { status: 204 });
    try {
      await t.createUser(tenant.apiKey);
      const pending = await deliveryWhere(tenant, endpoint.id, (d) => d.attempts >= 1);
      expectStatus(await t.call('DELETE', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey }), 204);
      const stored = await eventually(async () => {
        const d = await t.ctx.readStore.get<{ _id: string; status: string; attempts: number }>('webhook_deliveries', `${endpoint.id}:${pending.id}`);
        return d?.status === 'parked' ? d : null;
      });
      expect(stored.attempts).toBeLessThan(8);
    } finally {
      r.answer = () => ({ status: 204 });
    }
  });

  it('disables an endpoint that accepted nothing for 5 days when one more delivery runs out of attempts, parks its pending deliveries and tells the other endpoints', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['user.created'] });
    const watcherPath = `/${randomUUID()}`;
    await addEndpoint(tenant, watcherPath, { event_types: ['webhook.endpoint_disabled'] });
    r.answer = (x) => (x.path === path ? { status: 500 } : { status: 204 });
    try {
      clockOffsetMs = 6 * 24 * 3600 * 1000;
      await t.createUser(tenant.apiKey, { external_ref: 'last-straw' });
      const disabled = await eventually(async () => {
        const e = (await t.call('GET', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey })).json() as Endpoint;
        return e.status === 'disabled' ? e : null;
      });
      expect(disabled.disabled_reason).toBe('no delivery accepted for 5 days');
      await r.waitFor(() => verifiedAt(watcherPath).length === 1);
      expectAllVerified(watcherPath);
      expect(JSON.parse(r.at(watcherPath)[0]!.body)).toMatchObject({ type: 'webhook.endpoint_disabled', data: { endpoint_id: endpoint.id, reason: 'no delivery accepted for 5 days' } });
      expect((await deliveries(tenant, endpoint.id)).map((d) => [d.status, d.attempts])).toEqual([['parked', 8]]);
      // A disabled endpoint gets no new deliveries.
      await t.createUser(tenant.apiKey, { external_ref: 'after' });
      const test = await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey });
      expect(test.statusCode).toBe(409);
      expect(await deliveries(tenant, endpoint.id)).toHaveLength(1);
    } finally {
      clockOffsetMs = 0;
      r.answer = () => ({ status: 204 });
    }
  });

  it('keeps an endpoint older than 5 days active when it accepted something within 5 days and a delivery runs out of attempts', async () => {
    const { tenant, endpoint, path } = await setup({ event_types: ['webhook.test', 'user.created'] });
    try {
      // Six days on: the endpoint is old, but it accepts a delivery now.
      clockOffsetMs = 6 * 24 * 3600 * 1000;
      const ok = (await t.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: tenant.apiKey })).json() as Delivery;
      await eventually(async () => (await delivery(tenant, endpoint.id, ok.id)).status === 'done');
      r.answer = (x) => (x.path === path ? { status: 500 } : { status: 204 });
      await t.createUser(tenant.apiKey);
      await deliveryWhere(tenant, endpoint.id, (d) => d.status === 'parked' && d.attempts === 8);
      expect((await t.call('GET', `/v1/webhooks/${endpoint.id}`, { key: tenant.apiKey })).json()).toMatchObject({ status: 'active', disabled_reason: null });
    } finally {
      clockOffsetMs = 0;
      r.answer = () => ({ status: 204 });
    }
  });
});

describe('bounded concurrency (issue: one slow endpoint never holds back the others)', () => {
  it('delivers everything to a healthy endpoint while a hanging one holds only its own slots', async () => {
    const tenant = await t.createTenant('slow-and-fast');
    const slow = `/${randomUUID()}`;
    const fast = `/${randomUUID()}`;
    const slowEp = await addEndpoint(tenant, slow, { event_types: ['user.created'] });
    await addEndpoint(tenant, fast, { event_types: ['user.created'] });
    r.answer = (x) => (x.path === slow ? 'hang' : { status: 204 });
    try {
      for (let i = 0; i < 40; i++) await t.createUser(tenant.apiKey);
      await r.waitFor(() => verifiedAt(fast).length === 40);
      expectAllVerified(fast);
      // The hanging endpoint has exactly its 16 attempts in flight, no more.
      await r.waitFor(() => r.at(slow).length === 16);
      expect(r.at(slow)).toHaveLength(16);
      await t.call('PATCH', `/v1/webhooks/${slowEp.id}`, { key: tenant.apiKey, body: { enabled: false } });
      r.dropHanging();
    } finally {
      r.answer = () => ({ status: 204 });
    }
  });
});
