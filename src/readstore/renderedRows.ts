/**
 * Rows read as the JSON an answer sends, not as documents (issue 27: a page of 1,000 samples spent
 * most of its time building 1,000 documents, mapping them to answers and serialising those). A
 * template names, in answer order, each key and the stored top-level field it is written from;
 * `renderDoc` is the meaning every writer of such a page must match byte for byte (the samples
 * page from blocks' columns: queries/shared/templateRenderer.ts).
 *
 * - `string`: a string or null, as JSON.
 * - `value`: any JSON value stored (number, string, object, array, boolean, null), as JSON.
 * - `boolean`: true or false (null where the field holds null).
 * - `notTrue`: `true` unless the field is `true` (the merged view's `hidden` read as "listed").
 *
 * A missing field is written as `missing` (JSON text; `null` when not given).
 */
export type RenderedField = { key: string; field: string; as: 'string' | 'value' | 'boolean' | 'notTrue'; missing?: string };
export type RenderTemplate = readonly RenderedField[];

/**
 * A page of rows rendered by a template: their JSON objects in the query's order joined by commas
 * (the inside of the answer's array), how many, and the sort values of the last when more rows
 * follow it (the page's cursor), otherwise null.
 */
export type RenderedPage = { json: string; count: number; next: (string | number | boolean | null)[] | null };

/** The JSON object of a document by a template: what every adapter's rendering must equal. */
export function renderDoc(template: RenderTemplate, doc: Readonly<Record<string, unknown>>): string {
  let out = '{';
  for (let i = 0; i < template.length; i++) {
    const f = template[i]!;
    out += `${i ? ',' : ''}${JSON.stringify(f.key)}:${fieldJson(f, doc[f.field])}`;
  }
  return `${out}}`;
}

/** The JSON of one field's stored value `v` (undefined: missing) as the template's field writes it. */
export function fieldJson(f: RenderedField, v: unknown): string {
  if (f.as === 'notTrue') return v === true ? 'false' : 'true';
  if (v === undefined) return f.missing ?? 'null';
  if (f.as === 'boolean') return v === null ? 'null' : v ? 'true' : 'false';
  return JSON.stringify(v);
}
