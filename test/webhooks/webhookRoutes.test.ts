import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/eventCatalog.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

let t: TestApp;
let tenant: TenantHandle;
let other: TenantHandle;

beforeAll(async () => {
  // Nothing listens on these targets: this file is about the routes, not about sending.
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,3600,3600,3600,3600,3600,3600,3600' });
  tenant = await t.createTenant('hooks-a');
  other = await t.createTenant('hooks-b');
});
afterAll(async () => {
  await t?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const TARGET = 'http://127.0.0.1:9/hook';

type Endpoint = {
  id: string;
  url: string;
  description: string;
  event_types: string[];
  status: string;
  disabled_reason: string | null;
  failing_since: string | null;
  last_success_at: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
};

async function create(key: string, body: Record<string, unknown> = { url: TARGET }): Promise<Endpoint> {
  const res = await t.call('POST', '/v1/webhooks', { key, body });
  expectStatus(res, 201);
  return res.json() as Endpoint;
}

describe('POST /v1/webhooks (spec "Webhooks", "Webhook endpoint")', () => {
  it('answers 201 with every field of the endpoint, a whsec_ secret and a Location (Webhook endpoint)', async () => {
    const res = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: TARGET, description: 'main', event_types: ['user.created'] } });
    expectStatus(res, 201);
    const body = res.json() as Endpoint;
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      url: TARGET,
      description: 'main',
      event_types: ['user.created'],
      status: 'active',
      disabled_reason: null,
      failing_since: null,
      last_success_at: null,
      created_at: expect.stringMatching(RFC3339),
      updated_at: body.created_at,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(res.headers.location).toBe(`/v1/webhooks/${body.id}`);
  });

  it('shows the secret only in the create answer (Webhook endpoint: secret shown once)', async () => {
    const made = await create(tenant.apiKey);
    const one = await t.call('GET', `/v1/webhooks/${made.id}`, { key: tenant.apiKey });
    expectStatus(one, 200);
    expect(one.json()).not.toHaveProperty('secret');
    const list = (await t.call('GET', '/v1/webhooks', { key: tenant.apiKey })).json() as { data: Endpoint[] };
    expect(list.data.find((e) => e.id === made.id)).not.toHaveProperty('secret');
    const patched = await t.call('PATCH', `/v1/webhooks/${made.id}`, { key: tenant.apiKey, body: { description: 'x' } });
    expect(patched.json()).not.toHaveProperty('secret');
  });

  it('keeps the secret sealed: it appears in plain in neither the event log nor the read models (Authentication 8; secrets sealed)', async () => {
    const made = await create(tenant.apiKey);
    const events = await t.ctx.eventStore.readStream(`webhook-${made.id}`);
    expect(JSON.stringify(events)).not.toContain(made.secret!.slice('whsec_'.length));
    const docs = [...(await t.ctx.readStore.find('webhook_endpoints')), ...(await t.ctx.readStore.find('webhook_dispatch_endpoints'))];
    expect(JSON.stringify(docs)).not.toContain(made.secret!.slice('whsec_'.length));
  });

  it('stores no types for an absent or empty event_types (every type, later ones included) and drops duplicates (Events 1)', async () => {
    expect((await create(tenant.apiKey, { url: TARGET })).event_types).toEqual([]);
    expect((await create(tenant.apiKey, { url: TARGET, event_types: [] })).event_types).toEqual([]);
    expect((await create(tenant.apiKey, { url: TARGET, event_types: ['user.deleted', 'user.created', 'user.deleted'] })).event_types).toEqual(['user.created', 'user.deleted']);
  });

  it('accepts every type of the catalog (contracts §8)', async () => {
    expect((await create(tenant.apiKey, { url: TARGET, event_types: [...WEBHOOK_EVENT_TYPES] })).event_types).toEqual([...WEBHOOK_EVENT_TYPES]);
  });

  it.each([
    ['no url', {}],
    ['a url that is no URL', { url: 'not a url' }],
    ['a url that is not http(s)', { url: 'ftp://example.com/hook' }],
    ['a url over 2048 characters', { url: `https://example.com/${'a'.repeat(2030)}` }],
    ['a description over 255 characters', { url: TARGET, description: 'd'.repeat(256) }],
    ['an unknown event type', { url: TARGET, event_types: ['user.created', 'user.exploded'] }],
    ['event_types that is not an array', { url: TARGET, event_types: 'user.created' }],
    ['an unknown field', { url: TARGET, enabled: false }],
  ])('answers 400 for %s and creates nothing (Webhooks; Limits; Errors)', async (_what, body) => {
    const before = ((await t.call('GET', '/v1/webhooks', { key: other.apiKey })).json() as { data: unknown[] }).data.length;
    const res = await t.call('POST', '/v1/webhooks', { key: other.apiKey, body });
    expectProblem(res, 400);
    expect(((await t.call('GET', '/v1/webhooks', { key: other.apiKey })).json() as { data: unknown[] }).data).toHaveLength(before);
  });

  it('accepts a url of exactly 2048 characters and a description of exactly 255 (Limits)', async () => {
    const url = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    expect(url).toHaveLength(2048);
    const made = await create(tenant.apiKey, { url, description: 'd'.repeat(255) });
    expect(made.url).toBe(url);
  });

  it('ignores Idempotency-Key: the same key twice makes two endpoints (Conventions 4)', async () => {
    const headers = { 'idempotency-key': `same-${randomUUID()}` };
    const a = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: TARGET }, headers });
    const b = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: TARGET }, headers });
    expectStatus(a, 201);
    expectStatus(b, 201);
    expect(a.json().id).not.toBe(b.json().id);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers 401 without a key and 403 for the admin key on the tenant route (Authentication 5)', async () => {
    expectProblem(await t.call('POST', '/v1/webhooks', { body: { url: TARGET } }), 401);
    expectProblem(await t.call('POST', '/v1/webhooks', { key: t.adminKey, body: { url: TARGET } }), 403);
  });
});

describe('GET /v1/webhooks (spec "Webhooks": oldest first on one page; next_cursor always null)', () => {
  it("lists the tenant's own endpoints only, oldest first, next_cursor null", async () => {
    const fresh = await t.createTenant('list-only');
    const a = await create(fresh.apiKey);
    const b = await create(fresh.apiKey);
    await create(other.apiKey);
    const res = await t.call('GET', '/v1/webhooks', { key: fresh.apiKey });
    expectStatus(res, 200);
    expect(res.json()).toEqual({ data: [expect.objectContaining({ id: a.id }), expect.objectContaining({ id: b.id })], next_cursor: null });
  });
});

describe('PATCH /v1/webhooks/{id} (spec "Webhooks"; contracts §8)', () => {
  it('changes only the fields given and answers the endpoint after the change', async () => {
    const made = await create(tenant.apiKey, { url: TARGET, description: 'before', event_types: ['user.created'] });
    const res = await t.call('PATCH', `/v1/webhooks/${made.id}`, { key: tenant.apiKey, body: { description: 'after', event_types: ['data.written'] } });
    expectStatus(res, 200);
    const after = res.json() as Endpoint;
    expect(after).toMatchObject({ id: made.id, url: TARGET, description: 'after', event_types: ['data.written'], status: 'active' });
    expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(Date.parse(made.updated_at));
    expect((await t.call('GET', `/v1/webhooks/${made.id}`, { key: tenant.apiKey })).json()).toEqual(after);
  });

  it('enabled false disables with reason "disabled by the tenant"; enabled true makes it active and clears the reason (contracts §8)', async () => {
    const made = await create(tenant.apiKey);
    const off = await t.call('PATCH', `/v1/webhooks/${made.id}`, { key: tenant.apiKey, body: { enabled: false } });
    expect(off.json()).toMatchObject({ status: 'disabled', disabled_reason: 'disabled by the tenant' });
    const on = await t.call('PATCH', `/v1/webhooks/${made.id}`, { key: tenant.apiKey, body: { enabled: true } });
    expect(on.json()).toMatchObject({ status: 'active', disabled_reason: null });
  });

  it('event_types [] means every type again (Webhook endpoint)', async () => {
    const made = await create(tenant.apiKey, { url: TARGET, event_types: ['user.created'] });
    const res = await t.call('PATCH', `/v1/webhooks/${made.id}`, { key: tenant.apiKey, body: { event_types: [] } });
    expect(res.json()).toMatchObject({ event_types: [] });
  });

  it.each([
    ['a bad url', { url: 'nope' }],
    ['a description over 255 characters', { description: 'x'.repeat(256) }],
    ['an unknown type', { event_types: ['nope'] }],
    ['enabled that is not a boolean', { enabled: 'yes' }],
    ['an unknown field', { secret: 'whsec_x' }],
  ])('answers 400 for %s and changes nothing (Errors)', async (_what, body) => {
    const made = await create(tenant.apiKey, { url: TARGET, description: 'kept' });
    expectProblem(await t.call('PATCH', `/v1/webhooks/${made.id}`, { key: tenant.apiKey, body }), 400);
    const now = (await t.call('GET', `/v1/webhooks/${made.id}`, { key: tenant.apiKey })).json() as Endpoint;
    expect(now).toMatchObject({ url: TARGET, description: 'kept', status: 'active', updated_at: made.updated_at });
  });
});

describe('DELETE /v1/webhooks/{id} (contracts §8: 204)', () => {
  it('answers 204; afterwards the endpoint reads 404 and is not listed', async () => {
    const made = await create(tenant.apiKey);
    const res = await t.call('DELETE', `/v1/webhooks/${made.id}`, { key: tenant.apiKey });
    expectStatus(res, 204);
    expectProblem(await t.call('GET', `/v1/webhooks/${made.id}`, { key: tenant.apiKey }), 404);
    expectProblem(await t.call('DELETE', `/v1/webhooks/${made.id}`, { key: tenant.apiKey }), 404);
    const list = (await t.call('GET', '/v1/webhooks', { key: tenant.apiKey })).json() as { data: Endpoint[] };
    expect(list.data.map((e) => e.id)).not.toContain(made.id);
  });
});

describe('deliveries routes, bad input (contracts §8)', () => {
  it('answers 400 for an unknown status filter, a bad limit or a forged cursor on the deliveries list', async () => {
    const made = await create(tenant.apiKey);
    expectProblem(await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { key: tenant.apiKey, query: { status: 'failed' } }), 400);
    expectProblem(await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { key: tenant.apiKey, query: { limit: '1001' } }), 400);
    expectProblem(await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { key: tenant.apiKey, query: { limit: '0' } }), 400);
    expectProblem(await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { key: tenant.apiKey, query: { cursor: 'abc.def' } }), 400);
  });

  it('answers 404 for a delivery id that is not an integer, or unknown', async () => {
    const made = await create(tenant.apiKey);
    for (const id of ['abc', '1.5', '-1', '99999999', '1e3']) {
      expectProblem(await t.call('GET', `/v1/webhooks/${made.id}/deliveries/${id}`, { key: tenant.apiKey }), 404);
      expectProblem(await t.call('POST', `/v1/webhooks/${made.id}/deliveries/${id}/replay`, { key: tenant.apiKey }), 404);
    }
  });

  it('answers 400 for a recovery without a valid since, and 404 for a malformed endpoint id', async () => {
    const made = await create(tenant.apiKey);
    for (const body of [{}, { since: 'yesterday' }, { since: '2026-11-01' }, { since: '2026-11-01T00:00:00Z', extra: 1 }]) {
      expectProblem(await t.call('POST', `/v1/webhooks/${made.id}/recover`, { key: tenant.apiKey, body }), 400);
    }
    for (const id of ['not-a-uuid', `${made.id}0`]) {
      expectProblem(await t.call('GET', `/v1/webhooks/${id}`, { key: tenant.apiKey }), 404);
      expectProblem(await t.call('POST', `/v1/webhooks/${id}/test`, { key: tenant.apiKey }), 404);
    }
  });

  it('answers 409 to a test, and to a replay, of a disabled endpoint (a disabled endpoint takes no deliveries)', async () => {
    const made = await create(tenant.apiKey);
    const test = await t.call('POST', `/v1/webhooks/${made.id}/test`, { key: tenant.apiKey });
    expectStatus(test, 202);
    await t.call('PATCH', `/v1/webhooks/${made.id}`, { key: tenant.apiKey, body: { enabled: false } });
    expectProblem(await t.call('POST', `/v1/webhooks/${made.id}/test`, { key: tenant.apiKey }), 409);
    expectProblem(await t.call('POST', `/v1/webhooks/${made.id}/deliveries/${test.json().id}/replay`, { key: tenant.apiKey }), 409);
  });
});

describe("another tenant's endpoints and deliveries are 404 (Conventions 6)", () => {
  it('answers 404 on every webhook route for an endpoint of another tenant, and changes nothing', async () => {
    const theirs = await create(other.apiKey, { url: TARGET, description: 'theirs' });
    const test = await t.call('POST', `/v1/webhooks/${theirs.id}/test`, { key: other.apiKey });
    expectStatus(test, 202);
    const deliveryId = (test.json() as { id: number }).id;
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/webhooks/${theirs.id}`],
      ['PATCH', `/v1/webhooks/${theirs.id}`, { description: 'mine now' }],
      ['PATCH', `/v1/webhooks/${theirs.id}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/${theirs.id}`],
      ['GET', `/v1/webhooks/${theirs.id}/deliveries`],
      ['GET', `/v1/webhooks/${theirs.id}/deliveries/${deliveryId}`],
      ['POST', `/v1/webhooks/${theirs.id}/deliveries/${deliveryId}/replay`],
      ['POST', `/v1/webhooks/${theirs.id}/test`],
      ['POST', `/v1/webhooks/${theirs.id}/recover`, { since: '2020-01-01T00:00:00Z' }],
    ];
    for (const [method, url, body] of calls) {
      expectProblem(await t.call(method as 'GET', url, { key: tenant.apiKey, ...(body ? { body } : {}) }), 404);
    }
    const still = await t.call('GET', `/v1/webhooks/${theirs.id}`, { key: other.apiKey });
    expect(still.json()).toMatchObject({ description: 'theirs', status: 'active' });
    const deliveries = (await t.call('GET', `/v1/webhooks/${theirs.id}/deliveries`, { key: other.apiKey })).json() as { data: unknown[] };
    expect(deliveries.data).toHaveLength(1);
  });

  it("answers 404 for another endpoint's delivery id under one's own endpoint", async () => {
    const theirs = await create(other.apiKey);
    const test = (await t.call('POST', `/v1/webhooks/${theirs.id}/test`, { key: other.apiKey })).json() as { id: number };
    const mine = await create(tenant.apiKey);
    expectProblem(await t.call('GET', `/v1/webhooks/${mine.id}/deliveries/${test.id}`, { key: tenant.apiKey }), 404);
    expectProblem(await t.call('POST', `/v1/webhooks/${mine.id}/deliveries/${test.id}/replay`, { key: tenant.apiKey }), 404);
  });
});

describe('admin mirrors (spec "Instance admin routes": create and update webhook)', () => {
  it('creates with the same answer shape, a Location at the admin route, and the endpoint is the tenant’s', async () => {
    const res = await t.call('POST', `/v1/admin/tenants/${tenant.id}/webhooks`, { key: t.adminKey, body: { url: TARGET, description: 'by admin' } });
    expectStatus(res, 201);
    const made = res.json() as Endpoint;
    expect(made).toMatchObject({ description: 'by admin', status: 'active', secret: expect.stringMatching(/^whsec_/) });
    expect(res.headers.location).toBe(`/v1/admin/tenants/${tenant.id}/webhooks/${made.id}`);
    const own = await t.call('GET', `/v1/webhooks/${made.id}`, { key: tenant.apiKey });
    expectStatus(own, 200);
    expectProblem(await t.call('GET', `/v1/webhooks/${made.id}`, { key: other.apiKey }), 404);
  });

  it('updates with a Location at the admin route; another tenant’s endpoint is 404 there', async () => {
    const made = await create(tenant.apiKey);
    const res = await t.call('PATCH', `/v1/admin/tenants/${tenant.id}/webhooks/${made.id}`, { key: t.adminKey, body: { enabled: false } });
    expectStatus(res, 200);
    expect(res.json()).toMatchObject({ id: made.id, status: 'disabled', disabled_reason: 'disabled by the tenant' });
    expect(res.headers.location).toBe(`/v1/admin/tenants/${tenant.id}/webhooks/${made.id}`);
    const theirs = await create(other.apiKey);
    expectProblem(await t.call('PATCH', `/v1/admin/tenants/${tenant.id}/webhooks/${theirs.id}`, { key: t.adminKey, body: { enabled: false } }), 404);
    expect((await t.call('GET', `/v1/webhooks/${theirs.id}`, { key: other.apiKey })).json()).toMatchObject({ status: 'active' });
  });

  it('answers 400 for bad bodies on the admin routes too', async () => {
    expectProblem(await t.call('POST', `/v1/admin/tenants/${tenant.id}/webhooks`, { key: t.adminKey, body: { url: 'x' } }), 400);
    const made = await create(tenant.apiKey);
    expectProblem(await t.call('PATCH', `/v1/admin/tenants/${tenant.id}/webhooks/${made.id}`, { key: t.adminKey, body: { event_types: ['nope'] } }), 400);
  });

  it('records admin calls in the admin log and, with actor admin, in the tenant’s log (Instance admin routes)', async () => {
    const requestId = `admin-hook-${randomUUID()}`;
    const res = await t.call('POST', `/v1/admin/tenants/${tenant.id}/webhooks`, { key: t.adminKey, body: { url: TARGET }, headers: { 'x-request-id': requestId } });
    expectStatus(res, 201);
    const adminLog = (await t.call('GET', '/v1/admin/audit-log', { key: t.adminKey, query: { limit: '1000' } })).json() as { data: { request_id: string; actor: string; action: string }[] };
    expect(adminLog.data.find((e) => e.request_id === requestId)).toMatchObject({ actor: 'admin', action: 'webhook.create' });
    const tenantLog = (await t.call('GET', `/v1/admin/tenants/${tenant.id}/audit-log`, { key: t.adminKey, query: { limit: '1000' } })).json() as {
      data: { request_id: string; actor: string }[];
    };
    expect(tenantLog.data.find((e) => e.request_id === requestId)).toMatchObject({ actor: 'admin' });
  });
});
