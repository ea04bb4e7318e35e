import { findPage, type PageRequest } from '../../queries/shared/page.js';
import type { FindQuery, ReadStore, SortSpec } from '../../src/readstore/readStore.js';
import { renderDoc, type RenderedPage, type RenderTemplate } from '../../src/readstore/renderedRows.js';

/**
 * The oracle of a page written as JSON (issue 38): the per-sample rows' keyset page (findPage)
 * with each document written by renderDoc, joined by commas, and the rows' cursor. What the
 * samples page read from blocks (listSamplesJson) must equal byte for byte. Before blocks the
 * embedded store wrote this page in SQL (BENCHMARKS.md, issues 27 and 38); renderDoc is its meaning.
 */
export async function renderedRowsPage(
  readStore: ReadStore,
  collection: string,
  query: Omit<FindQuery, 'limit' | 'after' | 'sort'> & { sort: SortSpec },
  template: RenderTemplate,
  page: PageRequest,
): Promise<RenderedPage> {
  const { items, next } = await findPage(readStore, collection, query, page);
  return { json: items.map((d) => renderDoc(template, d)).join(','), count: items.length, next };
}
