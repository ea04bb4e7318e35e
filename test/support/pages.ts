import type { TestApp } from './server.js';
import { expectStatus } from './server.js';

type Row = Record<string, unknown>;

/** Every row of a list route, following next_cursor to the end (spec "Conventions" 1). */
export async function readAllPages(t: TestApp, key: string, url: string, query: Record<string, string> = {}): Promise<Row[]> {
  const out: Row[] = [];
  let cursor: string | null = null;
  do {
    const res = await t.call('GET', url, { key, query: { limit: '1000', ...query, ...(cursor ? { cursor } : {}) } });
    expectStatus(res, 200);
    const page = res.json() as { data: Row[]; next_cursor: string | null };
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}
