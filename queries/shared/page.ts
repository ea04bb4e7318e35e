import type { Doc, FindQuery, ReadStore, Scalar, SortSpec } from '../../src/readstore/readStore.js';
import { withTieBreaker } from '../../src/readstore/readStore.js';
import { getPath } from '../../src/readstore/documentUpdate.js';
import type { RenderedPage, RenderTemplate } from '../../src/readstore/renderedRows.js';
import { renderedPageOfDocs } from '../../src/readstore/renderedPage.js';

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

/**
 * A page like findPage written as JSON by a template (renderedRows.ts): its items' JSON objects
 * joined by commas, by the store where it can (ReadStore.findRenderedPage), otherwise from its
 * documents with renderDoc, the same bytes.
 */
export async function findRenderedPage(
  readStore: ReadStore,
  collection: string,
  query: Omit<FindQuery, 'limit' | 'after' | 'sort' | 'fields'> & { sort: SortSpec },
  template: RenderTemplate,
  page: PageRequest,
): Promise<RenderedPage> {
  const sort = withTieBreaker(query.sort);
  const find = { ...query, sort, after: page.after ?? undefined };
  if (readStore.findRenderedPage) return readStore.findRenderedPage(collection, { ...find, limit: page.limit }, template);
  const docs = await readStore.find(collection, { ...find, limit: page.limit + 1 });
  return renderedPageOfDocs(template, docs, page.limit, sort);
}
