import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixtureB, postUpload, requestFor } from '../ingest/uploadHelpers.js';
import { RawConnection, type RawAnswer } from '../support/rawHttp.js';
import { expectProblem, expectStatus, gate, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { eventually } from '../webhooks/receiver.js';
import { SAMPLE_BLOCKS } from '../../projections/records/sampleBlocks/sampleBlock.js';

/**
 * contracts §18 and issue 34 (findings 4 and 8): uploads and archives hold slots per instance
 * and per tenant, taken once the credential is known and before the body is read, so that one
 * tenant's slow bodies or archives cannot make another tenant's requests 429. Defaults: 8 uploads
 * in flight, 4 per tenant; 4 archives, 2 per tenant.
 */
let t: TestApp;
let port: number;
let a: TenantHandle;
let b: TenantHandle;
const open: RawConnection[] = [];

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  [a, b] = [await t.createTenant('slots-a'), await t.createTenant('slots-b')];
});
afterAll(async () => {
  for (const c of open) c.close();
  await t?.close();
});
afterEach(() => vi.restoreAllMocks());

async function userToken(tenant: TenantHandle, scopes: string[]): Promise<string> {
  const user = await t.createUser(tenant.apiKey);
  return (await t.mintToken(tenant.apiKey, user.id, { scopes })).token;
}

/**
 * Sends the headers and first bytes of a 50 MiB upload and holds the rest; resolves once the
 * service looked its (fresh) token up, after which the slot hook runs in the same turn.
 */
async function slowUpload(token: string, uploadId: string): Promise<RawConnection> {
  const readStore = t.ctx.readStore;
  const realGet = readStore.get.bind(readStore);
  const looked = gate();
  const spy = vi.spyOn(readStore, 'get').mockImplementation(async (collection, id) => {
    const doc = await realGet(collection, id);
    if (collection === 'user_tokens') looked.open();
    return doc as never;
  });
  const c = await RawConnection.open(port);
  open.push(c);
  await c.begin(
    `POST /v1/ingest/device-b HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nUpload-Id: ${uploadId}\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}`,
    '{"records": [',
  );
  await Promise.race([looked.promise, new Promise((r) => setTimeout(r, 10_000))]);
  spy.mockRestore();
  await new Promise((r) => setTimeout(r, 50));
  return c;
}

describe('slots per tenant as well as per instance (contracts §18)', { timeout: 60_000 }, () => {
  it("contracts §18: eight slow upload bodies of one tenant hold at most its share of the slots (429 beyond); another tenant's uploads are accepted meanwhile", async () => {
    const held: RawConnection[] = [];
    for (let i = 0; i < 8; i++) held.push(await slowUpload(await userToken(a, ['upload']), `slow-${i}`));
    // The tenant's share (4 of the instance's 8) is taken; its other bodies were refused at once, unread.
    const answers: RawAnswer[] = [];
    for (const c of held.slice(4)) answers.push(await c.answer());
    for (const answer of answers) {
      expect(answer.status).toBe(429);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      expect((JSON.parse(answer.body) as { detail: string }).detail).toMatch(/at most 4 uploads of one tenant/);
    }
    expectProblem(await postUpload(t, 'device-b', await userToken(a, ['upload']), 'a-more', requestFor('device-b', fixtureB())), 429);

    expectStatus(await postUpload(t, 'device-b', await userToken(b, ['upload']), 'b-1', requestFor('device-b', fixtureB())), 202);

    // The slots come back once the bodies go.
    for (const c of held) c.close();
    const token = await userToken(a, ['upload']);
    await eventually(async () => (await postUpload(t, 'device-b', token, 'a-after', requestFor('device-b', fixtureB()))).statusCode === 202);
  });

  it("contracts §18: one tenant's archives hold at most its share of the archive slots (429 beyond); another tenant's archive is served meanwhile", async () => {
    // Every archive of tenant A waits at its first read until opened.
    const hold = gate();
    let held = 0;
    const readStore = t.ctx.readStore;
    const find = readStore.find.bind(readStore);
    const aUsers = new Set<string>();
    vi.spyOn(readStore, 'find').mockImplementation(async (collection, query) => {
      const userId = (query?.filter as { user_id?: string } | undefined)?.user_id;
      if (collection === SAMPLE_BLOCKS && query?.limit === 1 && userId && aUsers.has(userId)) {
        held++;
        await hold.promise;
      }
      return find(collection, query);
    });
    const reader = async (tenant: TenantHandle) => {
      const user = await t.createUser(tenant.apiKey);
      if (tenant === a) aUsers.add(user.id);
      return (await t.mintToken(tenant.apiKey, user.id, { scopes: ['read'] })).token;
    };
    const archive = (token: string) => t.app.inject({ method: 'GET', url: '/v1/me/archive', headers: { authorization: `Bearer ${token}` } });

    const first = archive(await reader(a));
    const second = archive(await reader(a));
    await eventually(async () => held === 2);
    const third = await archive(await reader(a));
    expectProblem(third, 429);
    expect((third.json() as { detail: string }).detail).toMatch(/at most 2 archives of one tenant/);
    expectStatus(await archive(await reader(b)), 200);

    hold.open();
    expectStatus(await first, 200);
    expectStatus(await second, 200);
  });
});

