import type { RenderTemplate } from '../../src/readstore/renderedRows.js';

/**
 * `renderDoc` (src/readstore/renderedRows.ts) for many documents of one page: the keys' JSON
 * written once, and a string field's JSON reused while the field holds the same string as in the
 * document before (provenance, unit and type repeat through a page of samples read from blocks:
 * the page of 1,000 wrote ~19,000 JSON.stringify calls otherwise). Same bytes as renderDoc for
 * every document (test/queries/shared/templateRenderer.test.ts). One renderer serves one page:
 * it holds the last strings it wrote.
 */
export function templateRenderer(template: RenderTemplate): (doc: Readonly<Record<string, unknown>>) => string {
  const n = template.length;
  const fields = template.map((f) => f.field);
  const kinds = template.map((f) => f.as);
  const keys = template.map((f, i) => `${i ? ',' : '{'}${JSON.stringify(f.key)}:`);
  const missing = template.map((f) => f.missing ?? 'null');
  const lastString: (string | undefined)[] = new Array(n).fill(undefined);
  const lastJson: string[] = new Array(n).fill('');
  return (doc) => {
    let out = '';
    for (let i = 0; i < n; i++) {
      const v = doc[fields[i]!];
      const as = kinds[i];
      let json: string;
      if (as === 'notTrue') json = v === true ? 'false' : 'true';
      else if (v === undefined) json = missing[i]!;
      else if (as === 'boolean') json = v === null ? 'null' : v ? 'true' : 'false';
      else if (typeof v === 'string') {
        if (v !== lastString[i]) {
          lastString[i] = v;
          lastJson[i] = JSON.stringify(v);
        }
        json = lastJson[i]!;
      } else json = JSON.stringify(v);
      out += keys[i] + json;
    }
    return n ? `${out}}` : '{}';
  };
}
