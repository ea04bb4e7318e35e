import type { ReadStore } from '../../src/readstore/readStore.js';
import type { SampleDoc } from '../../projections/records/samplesProjection.js';
import type { BlockColumns } from '../../projections/records/sampleBlocks/sampleBlock.js';
import type { Page, PageRequest } from '../shared/page.js';
import type { RenderedPage, RenderTemplate } from '../../src/readstore/renderedRows.js';
import { writePage } from '../shared/templateRenderer.js';
import { docsOf, samplePage, type SampleRange } from './sampleBlocks.js';
import { withPrimary, type View } from './view.js';
import type { Window } from './window.js';

export type ListSamples = { userId: string; type: string; window: Window; view: View };

/** True when the user has samples of a type outside the catalog (spec "Reads" rule 1). */
export { hasSamplesOfType as userHasSamplesOfType } from './sampleBlocks.js';

const rangeOf = (q: ListSamples, page: PageRequest): SampleRange => ({
  userId: q.userId,
  type: q.type,
  start: q.window.start !== null ? new Date(q.window.start).toISOString() : null,
  end: q.window.end !== null ? new Date(q.window.end).toISOString() : null,
  after: page.after ?? null,
  // The merged view lists the samples no better ranked source's sample hides (view.ts).
  ...(q.view === 'merged' ? { leaveOut: ['hidden'] as const } : {}),
});

/** Quantity samples of one type, oldest first (start_date, then id). */
export async function listSamples(readStore: ReadStore, q: ListSamples, page: PageRequest): Promise<Page<SampleDoc & { primary: boolean }>> {
  const { refs, next } = await samplePage(readStore, rangeOf(q, page), page.limit);
  return withPrimary({ items: docsOf(refs), next });
}

/**
 * The same page as listSamples written as its answer's JSON by `template` (the route's; `primary`
 * is the template's `notTrue` of `hidden`): for the REST page of up to 1,000 samples, written
 * from the blocks' columns, without a document per sample.
 */
export async function listSamplesJson(readStore: ReadStore, q: ListSamples, template: RenderTemplate, page: PageRequest): Promise<RenderedPage> {
  const read = await readSamplesPage(readStore, q, template, page);
  const pieces: string[] = [];
  read.write((s) => pieces.push(s));
  return { json: pieces.join(''), count: read.count, next: read.next };
}

/** A page read and ready to be written: `write` hands its JSON (listSamplesJson's) to `out` in pieces, synchronously. */
export type SamplesPageJson = { count: number; next: RenderedPage['next']; write: (out: (s: string) => void) => void };

/** listSamplesJson's page, read now and written when the caller has somewhere to write it (the route: its answer's bytes). */
export async function readSamplesPage(readStore: ReadStore, q: ListSamples, template: RenderTemplate, page: PageRequest): Promise<SamplesPageJson> {
  const { refs, next } = await samplePage(readStore, rangeOf(q, page), page.limit);
  const write = (out: (s: string) => void) =>
    writePage(
      template,
      refs.length,
      (k, field) => refs[k]!.cols.field(field, refs[k]!.j),
      {
        groupOf: (k) => refs[k]!.cols,
        constant: (cols, field) => (cols as BlockColumns).constant(field),
        writeJson: (k, field, parts) => refs[k]!.cols.writeJson(field, refs[k]!.j, parts),
      },
      out,
    );
  return { count: refs.length, next, write };
}
