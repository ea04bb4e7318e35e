import { expect } from 'vitest';
import { INGESTED_EVENT, type NormalizedRecord, type RecordKind } from '../../../commands/ingestion/records.js';
import { expectProblem, expectStatus, startTestApp, type TenantHandle, type TestApp, type UserBody } from '../../support/server.js';

export const INGESTED_AT = '2026-11-05T12:00:00.000Z';

/** The provenance the record fixtures carry (test/projections/records/fixtures.ts), as a read answers it. */
export const APPLE_WATCH = { provider: 'device-a', source: 'apple', device: 'Apple Watch (Watch7,1)', ingested_at: INGESTED_AT };

/**
 * A record fixture as a read answers it (Resources; Reads): the record's own fields without `kind`
 * and `body_worn`, which no read serves, and without `omit` (what that read leaves out, e.g. an
 * ECG list's voltages); plus the row's id, the ingestion time, and `add` (what the read computes,
 * e.g. is_primary_source or a workout's track).
 */
export function served(record: NormalizedRecord, add: Record<string, unknown> = {}, omit: readonly string[] = []): Record<string, unknown> {
  // Every record answer carries its quality flags (contracts §15); these fixtures have none.
  const answer: Record<string, unknown> = { id: expect.any(Number), quality: [], ...record, ingested_at: INGESTED_AT, ...add };
  for (const field of ['kind', 'body_worn', ...omit]) delete answer[field];
  return answer;
}

/** The reads' isolation cases: `user` and `sibling` of `tenant`, `stranger` of another tenant. */
export type RecordsWorld = { t: TestApp; tenant: TenantHandle; other: TenantHandle; user: UserBody; sibling: UserBody; stranger: UserBody };

export async function recordsWorld(name: string): Promise<RecordsWorld> {
  const t = await startTestApp();
  const tenant = await t.createTenant(`${name}-a`);
  const other = await t.createTenant(`${name}-b`);
  const user = await t.createUser(tenant.apiKey);
  return { t, tenant, other, user, sibling: await t.createUser(tenant.apiKey), stranger: await t.createUser(other.apiKey) };
}

/**
 * Puts records in the way the ETL does: one `*.ingested` event on the user's ingest stream,
 * then waits until every projection has applied it.
 */
export async function ingest(t: TestApp, tenantId: string, userId: string, kind: RecordKind, records: NormalizedRecord[], provider = records[0]?.provider ?? 'device-a') {
  await t.ctx.eventStore.appendToStream(`ingest-${userId}-test`, [
    { type: INGESTED_EVENT[kind], data: { job: 'job-test', user_id: userId, tenant_id: tenantId, provider, ingested_at: INGESTED_AT, batch: 0, records } },
  ]);
  await t.ctx.projectors.waitForIdle();
}

export type PageBody<T = Record<string, unknown>> = { data: T[]; next_cursor: string | null };

export async function getPage<T = Record<string, unknown>>(t: TestApp, key: string, url: string, query: Record<string, string> = {}): Promise<PageBody<T>> {
  const res = await t.call('GET', url, { key, query });
  expectStatus(res, 200);
  const body = res.json() as PageBody<T>;
  expect(Object.keys(body).sort()).toEqual(['data', 'next_cursor']);
  return body;
}

/** Follows next_cursor to the end; returns every page (Conventions 1). */
export async function allPages<T = Record<string, unknown>>(t: TestApp, key: string, url: string, query: Record<string, string> = {}): Promise<PageBody<T>[]> {
  const pages: PageBody<T>[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const page: PageBody<T> = await getPage<T>(t, key, url, cursor ? { ...query, cursor } : query);
    pages.push(page);
    if (page.next_cursor === null) return pages;
    cursor = page.next_cursor;
  }
  throw new Error('more than 100 pages');
}

/** The 400 answers every record list gives through the shared helpers (Conventions 1, 2; Errors 2). */
export async function expectListRefusals(t: TestApp, key: string, url: string, query: Record<string, string> = {}) {
  expectProblem(await t.call('GET', url, { key, query: { ...query, start: 'yesterday' } }), 400);
  expectProblem(await t.call('GET', url, { key, query: { ...query, end: '2026-02-30' } }), 400);
  expectProblem(await t.call('GET', url, { key, query: { ...query, start: '2026-11-02', end: '2026-11-01' } }), 400);
  expectProblem(await t.call('GET', url, { key, query: { ...query, limit: '1001' } }), 400);
  expectProblem(await t.call('GET', url, { key, query: { ...query, limit: '0' } }), 400);
  expectProblem(await t.call('GET', url, { key, query: { ...query, cursor: 'not-a-cursor' } }), 400);
}
