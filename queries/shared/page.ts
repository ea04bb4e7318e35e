import type { Doc, FindQuery, ReadStore, Scalar, SortSpec } from '../../src/readstore/readStore.js';
import { withTieBreaker } from '../../src/readstore/readStore.js';
import { getPath } from '../../src/readstore/documentUpdate.js';

/** A page of a keyset-ordered list. `next` holds the keyset values to continue after, or null at the end. */
export type Page<T> = { items: T[]; next: Scalar[] | null };

export type PageRequest = { after?: readonly Scalar[] | null; limit: number };

/** Fetches one row more than asked, so the last page is known without a second query. */
export async function findPage<T extends Doc>(
  readStore: ReadStore,
  collection: string,
  query: Omit<FindQuery, 'limit' | 'after' | 'sort'> & { sort: SortSpec },
  page: PageRequest,
): Promise<Page<T>> {
  const sort = withTieBreaker(query.sort);
  const rows = await readStore.find<T>(collection, { ...query, sort, limit: page.limit + 1, after: page.after ?? undefined });
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  const next = rows.length > page.limit && last ? sort.map(([f]) => (getPath(last, f) ?? null) as Scalar) : null;
  return { items, next };
}
