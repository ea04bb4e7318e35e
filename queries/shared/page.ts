import type { Doc, FindQuery, ReadStore, Scalar, SortSpec } from '../../src/readstore/readStore.js';
import { withTieBreaker } from '../../src/readstore/readStore.js';
import { getPath } from '../../src/readstore/documentUpdate.js';
import { renderDoc, type RenderedRows, type RenderTemplate } from '../../src/readstore/renderedRows.js';

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
 * A page like findPage whose items are JSON written by a template (renderedRows.ts): by the store
 * where it can (ReadStore.findRendered), otherwise from its documents with renderDoc, the same bytes.
 */
export async function findRenderedPage(
  readStore: ReadStore,
  collection: string,
  query: Omit<FindQuery, 'limit' | 'after' | 'sort' | 'fields'> & { sort: SortSpec },
  template: RenderTemplate,
  page: PageRequest,
): Promise<Page<string>> {
  const sort = withTieBreaker(query.sort);
  const find: FindQuery = { ...query, sort, limit: page.limit + 1, after: page.after ?? undefined };
  const rows: RenderedRows = readStore.findRendered
    ? await readStore.findRendered(collection, find, template)
    : await readStore.find(collection, find).then((docs) => ({ json: docs.map((d) => renderDoc(template, d)), sortValues: docs.map((d) => sort.map(([f]) => (getPath(d, f) ?? null) as Scalar)) }));
  const more = rows.json.length > page.limit;
  const items = more ? rows.json.slice(0, page.limit) : rows.json;
  return { items, next: more && items.length ? rows.sortValues[items.length - 1]! : null };
}
