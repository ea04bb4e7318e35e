import type { RenderTemplate } from '../../src/readstore/renderedRows.js';

/**
 * `renderDoc` (src/readstore/renderedRows.ts) of each of a page's `count` documents, joined by
 * commas, a document's fields read by `valueOf` (a block's columns, not a built document): the
 * keys' JSON written once, and a field's JSON reused while the field holds the very value it held
 * in the document before (provenance, unit and type repeat through a page of samples read from
 * blocks, and a block's constant metadata may be one object: the page of 1,000 cost ~19,000
 * JSON.stringify calls otherwise). The page is written in one synchronous pass, so a reused
 * object cannot change between two documents. Same bytes as renderDoc for every document
 * (test/queries/shared/templateRenderer.test.ts).
 */
export function renderPage(template: RenderTemplate, count: number, valueOf: (k: number, field: string) => unknown): string {
  const n = template.length;
  const fields = template.map((f) => f.field);
  const kinds = template.map((f) => f.as);
  const keys = template.map((f, i) => `${i ? ',' : '{'}${JSON.stringify(f.key)}:`);
  const missing = template.map((f) => f.missing ?? 'null');
  const lastValue: unknown[] = new Array(n).fill(undefined);
  const lastJson: string[] = new Array(n).fill('');
  let page = '';
  for (let k = 0; k < count; k++) {
    let out = k ? ',' : '';
    for (let i = 0; i < n; i++) {
      const v = valueOf(k, fields[i]!);
      const as = kinds[i];
      let json: string;
      if (as === 'notTrue') json = v === true ? 'false' : 'true';
      else if (v === undefined) json = missing[i]!;
      else if (as === 'boolean') json = v === null ? 'null' : v ? 'true' : 'false';
      else if (v === lastValue[i]) json = lastJson[i]!;
      else {
        json = JSON.stringify(v);
        lastValue[i] = v;
        lastJson[i] = json;
      }
      out += keys[i] + json;
    }
    page += n ? `${out}}` : `${out}{}`;
  }
  return page;
}
