import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { pages } from '../../src/archive/userArchive.js';
import type { PageRequest } from '../../queries/shared/page.js';
import type { Scalar } from '../../src/readstore/readStore.js';
import { eventually } from '../webhooks/receiver.js';
import { expectProblem, expectStatus, gate, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { SAMPLE_BLOCKS } from '../../projections/records/sampleBlocks/sampleBlock.js';

/**
 * Issue 20, finding 6: `GET /v1/me/archive` streams one archive per user at a time and at most
 * ARCHIVES_IN_FLIGHT in all (429 with Retry-After beyond), and its reading gives the event loop a
 * turn before every read-model page instead of running from page to page on the HTTP thread.
 */
let t: TestApp;
let tenant: TenantHandle;
let base: string;

beforeAll(async () => {
  t = await startTestApp({ ARCHIVES_IN_FLIGHT: '2', ARCHIVES_IN_FLIGHT_PER_TENANT: '2' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}`;
  tenant = await t.createTenant('archive-limits');
});
afterAll(async () => t?.close());
afterEach(() => vi.restoreAllMocks());

async function readerToken(): Promise<string> {
  const user = await t.createUser(tenant.apiKey);
  return (await t.mintToken(tenant.apiKey, user.id, { scopes: ['read'] })).token;
}
const archive = (token: string) => t.app.inject({ method: 'GET', url: '/v1/me/archive', headers: { authorization: `Bearer ${token}` } });

/** Holds every archive at its first read (the user's first sample type) until opened; counts the archives held. */
function holdArchives() {
  const g = gate();
  let held = 0;
  const store = t.ctx.readStore;
  const find = store.find.bind(store);
  vi.spyOn(store, 'find').mockImplementation(async (collection, query) => {
    if (collection === SAMPLE_BLOCKS && query?.limit === 1) {
      held++;
      await g.promise;
    }
    return find(collection, query);
  });
  return { open: g.open, held: () => held };
}

describe('archive limits (issue 20, finding 6)', () => {
  it("a user's second archive while the first streams is 429 with Retry-After; another user's runs; ARCHIVES_IN_FLIGHT caps them all; slots come back when archives end", async () => {
    const [alice, bob, carol] = [await readerToken(), await readerToken(), await readerToken()];
    const hold = holdArchives();
    const first = archive(alice);
    await eventually(async () => hold.held() === 1);
    const again = await archive(alice);
    expectProblem(again, 429);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
    expect((again.json() as { detail: string }).detail).toMatch(/one at a time/);

    const second = archive(bob);
    await eventually(async () => hold.held() === 2);
    const full = await archive(carol);
    expectProblem(full, 429);
    expect(full.headers['retry-after']).toBeDefined();
    expect((full.json() as { detail: string }).detail).toMatch(/at most 2 archives/);

    hold.open();
    expectStatus(await first, 200);
    expectStatus(await second, 200);
    vi.restoreAllMocks();
    expectStatus(await archive(carol), 200);
    expectStatus(await archive(alice), 200);
  });

  it('a client that goes away mid-archive frees its slot', async () => {
    const token = await readerToken();
    const hold = holdArchives();
    const abort = new AbortController();
    const gone = fetch(`${base}/v1/me/archive`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal }).catch(() => 'aborted');
    await eventually(async () => hold.held() === 1);
    abort.abort();
    expect(await gone).toBe('aborted');
    hold.open();
    vi.restoreAllMocks();
    await eventually(async () => (await archive(token)).statusCode === 200);
  });

  it('gives the event loop a turn (a macrotask) before every page it reads', async () => {
    const turns: boolean[] = [];
    let looped = false;
    setImmediate(() => (looped = true));
    const fetchPage = async (p: PageRequest) => {
      turns.push(looped);
      looped = false;
      setImmediate(() => (looped = true));
      return p.after ? { items: [2], next: null } : { items: [1], next: [1] as Scalar[] };
    };
    const seen: number[] = [];
    for await (const items of pages(fetchPage)) seen.push(...items);
    expect(seen).toEqual([1, 2]);
    expect(turns).toEqual([true, true]);
  });
});
