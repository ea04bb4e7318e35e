import { fieldJson, type RenderTemplate } from '../../src/readstore/renderedRows.js';

/**
 * `renderDoc` (src/readstore/renderedRows.ts) of each of a page's `count` documents, joined by
 * commas, a document's fields read by `valueOf` (a block's columns, not a built document). Same
 * bytes as renderDoc for every document (test/queries/shared/templateRenderer.test.ts).
 *
 * Documents come in groups (`groupOf`: the block each sample was read from): a field that holds
 * the very same value in every document of its group in the page (a block's provenance, unit,
 * type, metadata, flags) is written once per group, joined with the keys around it into the
 * group's fragments, so a sample's JSON is its few varying values between those fragments. A
 * page of 1,000 samples was ~57,000 strings, most of them garbage for a service whose young
 * generation is 4 MiB (npm start's flags). The page is written in one synchronous pass, so a
 * value cannot change between the look and the write.
 */
export function renderPage(template: RenderTemplate, count: number, valueOf: (k: number, field: string) => unknown, groupOf: (k: number) => unknown = () => null): string {
  const n = template.length;
  const fields = template.map((f) => f.field);
  // Which fields hold one value throughout each group.
  const groups = new Map<unknown, { values: unknown[]; constant: boolean[] }>();
  for (let k = 0; k < count; k++) {
    const g = groupOf(k);
    const e = groups.get(g);
    if (!e) {
      groups.set(g, { values: fields.map((f) => valueOf(k, f)), constant: new Array<boolean>(n).fill(true) });
      continue;
    }
    for (let i = 0; i < n; i++) if (e.constant[i] && valueOf(k, fields[i]!) !== e.values[i]) e.constant[i] = false;
  }
  // Each group's fragments: what comes before, between and after its varying fields.
  const plans = new Map<unknown, { pieces: string[]; vars: number[] }>();
  for (const [g, e] of groups) {
    const pieces: string[] = [];
    const vars: number[] = [];
    let piece = '{';
    for (let i = 0; i < n; i++) {
      piece += `${i ? ',' : ''}${JSON.stringify(template[i]!.key)}:`;
      if (e.constant[i]) piece += fieldJson(template[i]!, e.values[i]);
      else {
        pieces.push(piece);
        vars.push(i);
        piece = '';
      }
    }
    pieces.push(`${piece}}`);
    plans.set(g, { pieces, vars });
  }
  let page = '';
  for (let k = 0; k < count; k++) {
    const { pieces, vars } = plans.get(groupOf(k))!;
    let out = k ? `,${pieces[0]}` : pieces[0]!;
    for (let v = 0; v < vars.length; v++) out += fieldJson(template[vars[v]!]!, valueOf(k, fields[vars[v]!]!)) + pieces[v + 1]!;
    page += out;
  }
  return page;
}
