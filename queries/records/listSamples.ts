import type { ReadStore } from '../../src/readstore/readStore.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import type { Page, PageRequest } from '../shared/page.js';
import type { RenderedPage, RenderTemplate } from '../../src/readstore/renderedRows.js';
import { renderPage } from '../shared/templateRenderer.js';
import { hasSamplesOfType, samplePage, type SampleRange } from './sampleBlocks.js';
import { withPrimary, type View } from './view.js';
import type { Window } from './window.js';

export type ListSamples = { userId: string; type: string; window: Window; view: View };

/** True when the user has samples of a type outside the catalog (spec "Reads" rule 1). */
export async function userHasSamplesOfType(readStore: ReadStore, userId: string, type: string): Promise<boolean> {
  return hasSamplesOfType(readStore, userId, type);
}

/** The merged view lists the samples no better ranked source's sample hides (view.ts). */
const listed = (s: SampleDoc) => s.hidden !== true;

const rangeOf = (q: ListSamples, page: PageRequest): SampleRange => ({
  userId: q.userId,
  type: q.type,
  start: q.window.start !== null ? new Date(q.window.start).toISOString() : null,
  end: q.window.end !== null ? new Date(q.window.end).toISOString() : null,
  after: page.after ?? null,
  ...(q.view === 'merged' ? { keep: listed } : {}),
});

/** Quantity samples of one type, oldest first (start_date, then id). */
export async function listSamples(readStore: ReadStore, q: ListSamples, page: PageRequest): Promise<Page<SampleDoc & { primary: boolean }>> {
  return withPrimary(await samplePage(readStore, rangeOf(q, page), page.limit));
}

/**
 * The same page as listSamples written as its answer's JSON by `template` (the route's; `primary`
 * is the template's `notTrue` of `hidden`): for the REST page of up to 1,000 samples, which then
 * writes each decoded sample's JSON directly instead of mapping and serialising documents.
 */
export async function listSamplesJson(readStore: ReadStore, q: ListSamples, template: RenderTemplate, page: PageRequest): Promise<RenderedPage> {
  const { items, next } = await samplePage(readStore, rangeOf(q, page), page.limit);
  return { json: renderPage(template, items), count: items.length, next };
}
