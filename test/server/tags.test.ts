import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, Receiver } from '../webhooks/receiver.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp, type UserBody } from '../support/server.js';

type TagBody = { tag_id: string; kind: string; label: string | null; note: string | null; start: string; end: string | null; created_at: string };
type Page = { data: TagBody[]; next_cursor: string | null };

let t: TestApp;
let r: Receiver;
let tenant: TenantHandle;
let other: TenantHandle;
let user: UserBody;

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  r = await Receiver.start();
  tenant = await t.createTenant('tags-a');
  other = await t.createTenant('tags-b');
  user = await t.createUser(tenant.apiKey, { external_ref: 'tagged' });
});
afterAll(async () => {
  await t?.close();
  await r?.close();
});

const post = (userId: string, body: unknown, headers: Record<string, string> = {}, key = tenant.apiKey) =>
  t.call('POST', `/v1/users/${userId}/tags`, { key, body, headers });
const list = async (userId: string, query: Record<string, string> = {}) => {
  const res = await t.call('GET', `/v1/users/${userId}/tags`, { key: tenant.apiKey, query });
  expectStatus(res, 200);
  return res.json() as Page;
};

describe('creating time tags (contracts §9: POST /v1/users/{id}/tags)', () => {
  it('answers 201 with tag_id, kind, label, note, start, end and created_at; times normalised to UTC', async () => {
    const res = await post(user.id, { kind: 'illness', label: 'Flu', note: 'fever two days', start: '2026-01-10T08:00:00+01:00', end: '2026-01-14T00:00:00Z' });
    expectStatus(res, 201);
    expect(res.json()).toEqual({
      tag_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      kind: 'illness',
      label: 'Flu',
      note: 'fever two days',
      start: '2026-01-10T07:00:00.000Z',
      end: '2026-01-14T00:00:00.000Z',
      created_at: expect.any(String),
    });
  });

  it('a tag without end is ongoing; label and note default to null', async () => {
    const res = await post(user.id, { kind: 'habit', start: '2026-02-01T00:00:00Z' });
    expectStatus(res, 201);
    expect(res.json()).toMatchObject({ kind: 'habit', label: null, note: null, end: null });
  });

  it('honours Idempotency-Key as POST /v1/users does: same key and body replay the first tag; another body is a 422 (Conventions 4, Errors 3)', async () => {
    const body = { kind: 'travel', label: 'Lisbon', start: '2026-03-01T00:00:00Z', end: '2026-03-05T00:00:00Z' };
    const first = await post(user.id, body, { 'idempotency-key': 'trip-1' });
    expectStatus(first, 201);
    const again = await post(user.id, body, { 'idempotency-key': 'trip-1' });
    expectStatus(again, 201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expectProblem(await post(user.id, { ...body, label: 'Porto' }, { 'idempotency-key': 'trip-1' }), 422);
    const travel = await list(user.id, { kind: 'travel' });
    expect(travel.data.map((x) => x.tag_id)).toEqual([(first.json() as TagBody).tag_id]);
  });

  it.each([
    ['an unknown kind', { kind: 'holiday', start: '2026-01-01T00:00:00Z' }],
    ['no kind', { start: '2026-01-01T00:00:00Z' }],
    ['no start', { kind: 'other' }],
    ['a start that is not RFC 3339', { kind: 'other', start: 'yesterday' }],
    ['a bare date as start', { kind: 'other', start: '2026-01-01' }],
    ['an impossible date', { kind: 'other', start: '2026-02-30T00:00:00Z' }],
    ['end before start', { kind: 'other', start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' }],
    ['a label over 255 characters', { kind: 'other', start: '2026-01-01T00:00:00Z', label: 'x'.repeat(256) }],
    ['a note over 4,000 characters', { kind: 'other', start: '2026-01-01T00:00:00Z', note: 'x'.repeat(4001) }],
    ['a wrongly typed label', { kind: 'other', start: '2026-01-01T00:00:00Z', label: 7 }],
  ])('refuses %s with a 400 problem and stores nothing', async (_name, body) => {
    const fresh = await t.createUser(tenant.apiKey);
    expectProblem(await post(fresh.id, body), 400);
    expect((await list(fresh.id)).data).toEqual([]);
  });

  it("another tenant's user, an unknown user and a malformed id are 404 (Conventions 6)", async () => {
    const body = { kind: 'other', start: '2026-01-01T00:00:00Z' };
    expectProblem(await post(user.id, body, {}, other.apiKey), 404);
    expectProblem(await post('00000000-0000-4000-8000-000000000000', body), 404);
    expectProblem(await post('nope', body), 404);
    expectProblem(await t.call('GET', `/v1/users/${user.id}/tags`, { key: other.apiKey }), 404);
  });

  it('a user token is refused with 403; no credential with 401 (Authentication 5)', async () => {
    const token = await t.mintToken(tenant.apiKey, user.id, { scopes: ['read'] });
    expectProblem(await post(user.id, { kind: 'other', start: '2026-01-01T00:00:00Z' }, {}, token.token), 403);
    expectProblem(await t.call('GET', `/v1/users/${user.id}/tags`), 401);
  });
});

describe('listing time tags (spec "Time tags": kind, start, end, cursor, limit)', () => {
  let u: UserBody;
  beforeAll(async () => {
    u = await t.createUser(tenant.apiKey);
    for (const body of [
      { kind: 'training_block', label: 'base', start: '2026-01-01T00:00:00Z', end: '2026-01-31T00:00:00Z' },
      { kind: 'injury', label: 'ankle', start: '2026-01-20T00:00:00Z', end: '2026-01-25T00:00:00Z' },
      { kind: 'medication', label: 'ongoing', start: '2026-01-15T00:00:00Z' },
      { kind: 'event', label: 'race', start: '2026-02-10T09:00:00Z', end: '2026-02-10T12:00:00Z' },
    ])
      expectStatus(await post(u.id, body), 201);
  });

  it('lists oldest start first', async () => {
    expect((await list(u.id)).data.map((x) => x.label)).toEqual(['base', 'ongoing', 'ankle', 'race']);
  });

  it('answers the tags overlapping the window, ongoing ones included', async () => {
    expect((await list(u.id, { start: '2026-01-26', end: '2026-02-01' })).data.map((x) => x.label)).toEqual(['base', 'ongoing']);
    expect((await list(u.id, { start: '2026-02-10T10:00:00Z' })).data.map((x) => x.label)).toEqual(['ongoing', 'race']);
    expect((await list(u.id, { end: '2026-01-15' })).data.map((x) => x.label)).toEqual(['base']);
    // A tag that ended at the window's start does not overlap it (end exclusive).
    expect((await list(u.id, { start: '2026-01-31T00:00:00Z', end: '2026-02-01' })).data.map((x) => x.label)).toEqual(['ongoing']);
  });

  it('filters by kind', async () => {
    expect((await list(u.id, { kind: 'injury' })).data.map((x) => x.label)).toEqual(['ankle']);
  });

  it('pages with cursor and limit until next_cursor is null', async () => {
    const labels: (string | null)[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await list(u.id, cursor ? { limit: '3', cursor } : { limit: '3' });
      labels.push(...page.data.map((x) => x.label));
      cursor = page.next_cursor;
    } while (cursor);
    expect(labels).toEqual(['base', 'ongoing', 'ankle', 'race']);
  });

  it.each([
    ['an unknown kind', { kind: 'holiday' }],
    ['limit above 1000', { limit: '1001' }],
    ['limit 0', { limit: '0' }],
    ['end before start', { start: '2026-02-01', end: '2026-01-01' }],
    ['an unparsable start', { start: 'soon' }],
    ['a forged cursor', { cursor: 'abc' }],
  ])('refuses %s with a 400 problem', async (_name, query) => {
    expectProblem(await t.call('GET', `/v1/users/${u.id}/tags`, { key: tenant.apiKey, query }), 400);
  });

  it("a cursor of another user's list is refused", async () => {
    const page = await list(u.id, { limit: '1' });
    expectProblem(await t.call('GET', `/v1/users/${user.id}/tags`, { key: tenant.apiKey, query: { cursor: page.next_cursor! } }), 400);
  });
});

describe('tag.created webhook event (contracts §8)', () => {
  it('is delivered with user_id, external_ref and tag_id', async () => {
    const endpointRes = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: r.url('/tags'), event_types: ['tag.created'] } });
    expectStatus(endpointRes, 201);
    const endpoint = endpointRes.json() as { id: string; secret: string };
    r.trust('/tags', endpoint.secret);
    const created = (await post(user.id, { kind: 'event', start: '2026-04-01T00:00:00Z' })).json() as TagBody;
    const got = await eventually(async () => r.at('/tags').find((x) => JSON.parse(x.body).data.tag_id === created.tag_id));
    expect(got.verified).not.toBeNull();
    expect(JSON.parse(got.body)).toMatchObject({ type: 'tag.created', test: false, data: { user_id: user.id, external_ref: 'tagged', tag_id: created.tag_id } });
  });
});

describe("a deleted user's tags", () => {
  it('are gone with the user: the list is a 404 and a new tag is refused', async () => {
    const u = await t.createUser(tenant.apiKey);
    expectStatus(await post(u.id, { kind: 'other', start: '2026-01-01T00:00:00Z' }), 201);
    const job = await t.deleteUser(tenant.apiKey, u.id);
    await t.waitForDeletion(tenant.apiKey, job);
    expectProblem(await post(u.id, { kind: 'other', start: '2026-01-01T00:00:00Z' }), 404);
    expect(await t.ctx.readStore.find('time_tags', { filter: { user_id: u.id } })).toEqual([]);
  });
});
