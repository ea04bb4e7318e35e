import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { category, cycle, daily, heartbeats, nutrition, sleepSession, workout, point } from '../projections/records/fixtures.js';
import { ingestRecords } from '../server/records/pipelineFixtures.js';
import { fixtureB, postUpload, requestFor, waitForEtl } from '../ingest/uploadHelpers.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

let t: TestApp;
let tenant: TenantHandle;
let userId: string;
let client: Client;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  tenant = await t.createTenant('mcp-rest');
  userId = (await t.createUser(tenant.apiKey)).id;
  await t.createUser(tenant.apiKey);
  await t.createUser(tenant.apiKey);
  const who = { userId, tenantId: tenant.id };
  await ingestRecords(t, who, [category(), category({ external_id: 'cat-2', start_date: '2026-11-02T23:00:00.000Z', end_date: '2026-11-02T23:30:00.000Z' })]);
  await ingestRecords(t, who, [sleepSession(), sleepSession({ external_id: 'night-2', bedtime_start: '2026-11-02T22:00:00.000Z', bedtime_end: '2026-11-03T06:00:00.000Z' })]);
  await ingestRecords(t, who, [
    workout({ route: [point('2026-11-01T07:00:00Z', 52.5, 13.4), point('2026-11-01T07:00:10Z', 52.5001, 13.4001), point('2026-11-01T07:00:20Z', 52.5002, 13.4002)] } as never),
  ]);
  await ingestRecords(t, who, [nutrition(), nutrition({ external_id: 'meal-2', start_date: '2026-11-02T12:00:00.000Z', end_date: '2026-11-02T12:30:00.000Z' } as never)]);
  await ingestRecords(t, who, [daily(), daily({ external_id: 'day-2', date: '2026-11-02' } as never)]);
  await ingestRecords(t, who, [heartbeats(), heartbeats({ external_id: 'hb-2', start_date: '2026-11-02T03:00:00.000Z', end_date: '2026-11-02T03:01:00.000Z' })]);
  await ingestRecords(t, who, [cycle(), cycle({ external_id: 'cycle-2', start_date: '2026-10-31', period_end_date: '2026-11-04' })]);
  const tag = await t.call('POST', `/v1/users/${userId}/tags`, { key: tenant.apiKey, body: { kind: 'travel', start: '2026-11-01T00:00:00Z', end: '2026-11-03T00:00:00Z' } });
  expect(tag.statusCode).toBe(201);
  client = new Client({ name: 'wellstream-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tenant.apiKey}` } } }));
});

afterAll(async () => {
  await client.close();
  await t.close();
});

type Answer = { records: unknown[]; next_cursor: string | null; truncated: boolean };

/** Every record of a tool, one record per call, following next_cursor. */
async function toolRecords(name: string, args: Record<string, unknown>, paged = true): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | null = null;
  do {
    const r = (await client.callTool({ name, arguments: { ...args, ...(paged ? { limit: 1 } : {}), ...(cursor ? { cursor } : {}) } })) as { isError?: boolean; content: { text: string }[] };
    expect(r.isError, `${name}: ${r.content[0]!.text}`).not.toBe(true);
    const a = JSON.parse(r.content[0]!.text) as Answer;
    out.push(...a.records);
    cursor = a.next_cursor;
  } while (cursor);
  return out;
}

async function restRecords(url: string, query: Record<string, string> = {}): Promise<unknown[]> {
  const res = await t.call('GET', url, { key: tenant.apiKey, query: { limit: '1000', ...query } });
  expect(res.statusCode, url).toBe(200);
  return (res.json() as { data: unknown[] }).data;
}

describe('MCP tools answer what the REST routes answer (spec "Agent interface (MCP)": same read models)', () => {
  it('every per-user list tool, paged one record at a time, holds the records of its REST route', async () => {
    const u = `/v1/users/${userId}`;
    const pairs: [string, Record<string, unknown>, string, Record<string, string>][] = [
      ['get_category_samples', { user_id: userId, view: 'all' }, `${u}/category-samples`, { view: 'all' }],
      ['get_sleep', { user_id: userId }, `${u}/sleep`, {}],
      ['get_workouts', { user_id: userId }, `${u}/workouts`, {}],
      ['get_nutrition', { user_id: userId }, `${u}/nutrition`, {}],
      ['get_daily', { user_id: userId }, `${u}/daily`, {}],
      ['get_rr_intervals', { user_id: userId }, `${u}/rr-intervals`, {}],
      ['get_hrv', { user_id: userId }, `${u}/hrv`, {}],
      ['get_menstrual_cycles', { user_id: userId }, `${u}/menstrual-cycles`, {}],
      ['get_tags', { user_id: userId, start: '2026-10-01T00:00:00Z' }, `${u}/tags`, { start: '2026-10-01T00:00:00Z' }],
      ['list_users', {}, '/v1/users', {}],
    ];
    for (const [tool, args, url, query] of pairs) {
      const rest = await restRecords(url, query);
      expect(rest.length, tool).toBeGreaterThan(0);
      expect(await toolRecords(tool, args), tool).toEqual(rest);
    }
  });

  it('session phases, workout route, connections, webhooks, uploads and the catalog match their REST answers', async () => {
    const u = `/v1/users/${userId}`;
    const [session] = (await restRecords(`${u}/sleep`)) as { id: number }[];
    expect(await toolRecords('get_sleep', { user_id: userId, session_id: session!.id })).toEqual(await restRecords(`${u}/sleep/${session!.id}/phases`));
    const [w] = (await restRecords(`${u}/workouts`)) as { id: number }[];
    const route = await restRecords(`${u}/workouts/${w!.id}/route`);
    expect(route.length).toBe(3);
    expect(await toolRecords('get_workout_route', { user_id: userId, workout_id: w!.id })).toEqual(route);
    const connections = await t.call('GET', `${u}/connections`, { key: tenant.apiKey });
    expect(await toolRecords('list_connections', { user_id: userId }, false)).toEqual((connections.json() as { data: unknown[] }).data);
    expect(await toolRecords('list_webhooks', { deliveries: true }, false)).toEqual(await restRecords('/v1/webhooks'));
    const { token } = await t.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
    for (const id of ['mcp-1', 'mcp-2']) expect((await postUpload(t, 'device-b', token, id, requestFor('device-b', fixtureB()))).statusCode).toBe(202);
    await waitForEtl(t, tenant.apiKey, userId);
    const uploads = await restRecords(`${u}/uploads`);
    expect(uploads.length).toBeGreaterThan(0);
    expect(await toolRecords('list_uploads', { user_id: userId })).toEqual(uploads);
    const catalog = (await toolRecords('list_quantity_types', {}, false)) as { type: string; loinc_code: string | null }[];
    expect(catalog.find((c) => c.type === 'heart_rate')).toMatchObject({ unit: 'count/min', ucum_unit: '/min', loinc_code: '8867-4' });
  });
});
