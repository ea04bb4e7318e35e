/** A page of documents written by a rendering template (renderedRows.ts): the meaning every store's ReadStore.findRenderedPage must match. */
import { getPath } from './documentUpdate.js';
import type { Doc, Scalar, SortSpec } from './readStore.js';
import { renderDoc, type RenderedPage, type RenderTemplate } from './renderedRows.js';

/**
 * The page of `docs` (read in `sort` order, tie-breaker included, with one more than `limit`) by a
 * template: what every store's rendered page must equal.
 */
export function renderedPageOfDocs(template: RenderTemplate, docs: readonly Doc[], limit: number, sort: SortSpec): RenderedPage {
  const items = docs.length > limit ? docs.slice(0, limit) : docs;
  const last = items[items.length - 1];
  return { json: items.map((d) => renderDoc(template, d)).join(','), count: items.length, next: docs.length > limit && last ? sort.map(([f]) => (getPath(last, f) ?? null) as Scalar) : null };
}
