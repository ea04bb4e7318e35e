import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderPage, writePage } from '../../../queries/shared/templateRenderer.js';
import { renderDoc, type RenderedField, type RenderTemplate } from '../../../src/readstore/renderedRows.js';
import { QUANTITY_SAMPLE_JSON } from '../../../src/server/routes/samples.js';

/**
 * Issue 38: the samples page written from blocks must be the bytes the page of rows was
 * (spec "Reads" rule 1; src/readstore/renderedRows.ts: renderDoc is the meaning every writer matches).
 */
const FIELDS = ['a', 'b', 'c', 'd'] as const;
const fieldArb: fc.Arbitrary<RenderedField> = fc.record(
  { key: fc.string(), field: fc.constantFrom(...FIELDS), as: fc.constantFrom('string', 'value', 'boolean', 'notTrue'), missing: fc.constantFrom('null', '[]', '0') },
  { requiredKeys: ['key', 'field', 'as'] },
) as fc.Arbitrary<RenderedField>;
// Values repeat often (the renderer reuses a string's JSON while it repeats) and change kind.
const valueArb = fc.oneof(fc.constantFrom('x', 'x', 'ü "q" \\ \n', '', null, true, false, 0, 55.5, -1e21), fc.string(), fc.jsonValue(), fc.constant(undefined));
const docArb = fc.record({ a: valueArb, b: valueArb, c: valueArb, d: valueArb }, { requiredKeys: [] });

describe('a page written by renderPage equals renderDoc of each document, joined by commas (issue 38; renderedRows.ts)', () => {
  it('random templates over random documents in sequence', () => {
    fc.assert(
      fc.property(fc.array(fieldArb, { maxLength: 6 }), fc.array(docArb, { maxLength: 30 }), fc.integer({ min: 1, max: 4 }), (template: RenderTemplate, docs, groups) => {
        // One object shared by several documents, as a block's constant metadata may be.
        const shared = { note: 'ü', n: [1, null] };
        const page = docs.map((d, i) => (i % 3 === 2 ? { ...d, b: shared } : d)) as Record<string, unknown>[];
        const want = page.map((d) => renderDoc(template, d)).join(',');
        expect(renderPage(template, page.length, (k, f) => page[k]![f])).toBe(want);
        // Documents in groups (the blocks they were read from): any grouping writes the same bytes.
        expect(renderPage(template, page.length, (k, f) => page[k]![f], { groupOf: (k) => k % groups })).toBe(want);
        // With what the caller knows (a block's columns): which fields are one value per group, and a field's JSON.
        const oneValue = (g: unknown, f: string) => page.every((d, k) => k % groups !== g || d[f] === page.find((_, k0) => k0 % groups === g)![f]);
        const writeJson = (k: number, f: string, out: string[]) => page[k]![f] !== undefined && out.push(JSON.stringify(page[k]![f])) > 0;
        expect(renderPage(template, page.length, (k, f) => page[k]![f], { groupOf: (k) => k % groups, constant: oneValue, writeJson })).toBe(want);
        expect(renderPage(template, page.length, (k, f) => page[k]![f], { groupOf: (k) => k % groups, constant: () => false, writeJson })).toBe(want);
      }),
      { numRuns: 500 },
    );
  });

  it('the samples route template over samples whose strings repeat and change', () => {
    const docs = [
      { id: 1, type: 'heart_rate', value: 55, unit: 'count/min', source_name: 'Watch', hidden: false, quality: [], metadata: {} },
      { id: 2, type: 'heart_rate', value: 56.5, unit: 'count/min', source_name: 'Watch', hidden: true, metadata: { a: 'ü' } },
      { id: 3, type: 'heart_rate', value: 57, unit: 'count/min', source_name: null, was_user_entered: true },
      { id: 4, type: 'heart_rate', value: 58, unit: 'count/min', source_name: 'Watch "2"' },
    ];
    expect(renderPage(QUANTITY_SAMPLE_JSON, docs.length, (k, f) => (docs[k] as Record<string, unknown>)[f])).toBe(docs.map((d) => renderDoc(QUANTITY_SAMPLE_JSON, d)).join(','));
    expect(renderPage(QUANTITY_SAMPLE_JSON, 0, () => undefined)).toBe('');
  });

  it('writePage hands a page of 1,000 over in pieces of a few KB whose concatenation is renderPage\'s page (the route writes them into its answer\'s bytes)', () => {
    const docs = Array.from({ length: 1000 }, (_, i) => ({ id: 1000 + i, type: 'heart_rate', value: 55 + (i % 60), unit: 'count/min', start_date: `2026-03-01T00:${String(i % 60).padStart(2, '0')}:00.000Z`, source_name: i % 7 ? 'Watch' : 'Watch "ü"', hidden: i % 2 === 0, metadata: { n: i } }));
    const valueOf = (k: number, f: string) => (docs[k] as Record<string, unknown>)[f];
    const groupOf = (k: number) => Math.floor(k / 100);
    const pieces: string[] = [];
    writePage(QUANTITY_SAMPLE_JSON, docs.length, valueOf, { groupOf }, (s) => pieces.push(s));
    expect(pieces.join('')).toBe(docs.map((d) => renderDoc(QUANTITY_SAMPLE_JSON, d)).join(','));
    expect(pieces.join('')).toBe(renderPage(QUANTITY_SAMPLE_JSON, docs.length, valueOf, { groupOf }));
    expect(pieces.length).toBeGreaterThan(10);
    expect(Math.max(...pieces.map((s) => s.length))).toBeLessThan(64 * 1024);
  });
});
