import { fieldJson, type RenderTemplate } from '../../src/readstore/renderedRows.js';

/**
 * What a caller can say of its documents beyond their values, to write them with less work:
 * - `groupOf(k)`: the group of document k (the block each sample was read from);
 * - `constant(g, field)`: true when every document of group g holds one value of the field (a
 *   block's provenance, unit, type, metadata, flags stored once): the renderer then takes it from
 *   the group's first document instead of comparing every document's;
 * - `writeJson(k, field, out)`: JSON.stringify of the field's value pushed onto `out` (in as many
 *   pieces as the caller likes), or false, nothing pushed, where it is missing: when the caller
 *   writes it more cheaply than from the value (a block's start from pieces made once).
 */
export type PageShape = {
  groupOf?: (k: number) => unknown;
  constant?: (group: unknown, field: string) => boolean;
  writeJson?: (k: number, field: string, out: string[]) => boolean;
};

/**
 * `renderDoc` (src/readstore/renderedRows.ts) of each of a page's `count` documents, joined by
 * commas, a document's fields read by `valueOf` (a block's columns, not a built document). Same
 * bytes as renderDoc for every document (test/queries/shared/templateRenderer.test.ts).
 *
 * Documents come in groups (`shape.groupOf`): a field that holds the very same value in every
 * document of its group in the page is written once per group, joined with the keys around it
 * into the group's fragments, so a sample's JSON is its few varying values between those
 * fragments. A page of 1,000 samples was ~57,000 strings, most of them garbage for a service
 * whose young generation is 4 MiB (npm start's flags). The parts are joined into pieces of a few KB
 * (writePage) and the pieces once at the end (one flat string, not a rope of thousands of
 * concatenations). The page is written in one synchronous pass, so a value cannot change between
 * the look and the write.
 */
export function renderPage(template: RenderTemplate, count: number, valueOf: (k: number, field: string) => unknown, shape: PageShape = {}): string {
  const pieces: string[] = [];
  writePage(template, count, valueOf, shape, (s) => pieces.push(s));
  return pieces.join('');
}

/**
 * renderPage's text handed to `write` in consecutive pieces of a few KB (their concatenation is
 * renderPage's string), rather than joined into one string: the HTTP route writes them straight
 * into its answer's bytes (src/server/answerBytes.ts), so a page never exists as one ~600 KB
 * string (V8's large-object space: old generation, the mark-compacts that made the page's p99) and
 * the parts list stays short.
 */
export function writePage(template: RenderTemplate, count: number, valueOf: (k: number, field: string) => unknown, shape: PageShape, write: (s: string) => void): void {
  const n = template.length;
  const fields = template.map((f) => f.field);
  const groupOf = shape.groupOf ?? (() => null);
  // Which fields hold one value throughout each group: as the caller knows it, else by comparing.
  const groups = new Map<unknown, { values: unknown[]; constant: boolean[] }>();
  for (let k = 0; k < count; k++) {
    const g = groupOf(k);
    const e = groups.get(g);
    if (!e) {
      const known = shape.constant;
      const constant = known ? fields.map((f) => known(g, f)) : new Array<boolean>(n).fill(true);
      groups.set(g, { values: fields.map((f, i) => (constant[i] ? valueOf(k, f) : undefined)), constant });
      continue;
    }
    if (shape.constant) continue;
    for (let i = 0; i < n; i++) if (e.constant[i] && valueOf(k, fields[i]!) !== e.values[i]) e.constant[i] = false;
  }
  // Each group's fragments: what comes before, between and after its varying fields.
  const plans = new Map<unknown, Plan>();
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
    plans.set(g, { pieces, vars, joins: new Map() });
  }
  // A varying field written from its JSON where the caller gives it (fieldJson's `string` and
  // `value`: the value's JSON, or `missing` where it is missing), else from its value.
  const writeJson = shape.writeJson;
  const fromJson = template.map((f) => writeJson !== undefined && (f.as === 'string' || f.as === 'value'));
  // A document's last fragment, the comma and the next one's first fragment are one part (joins).
  const parts: string[] = [];
  let plan: Plan | undefined;
  let planGroup: unknown = undefined;
  for (let k = 0; k < count; k++) {
    if (parts.length >= PIECE_PARTS) {
      write(parts.join(''));
      parts.length = 0;
    }
    const g = groupOf(k);
    const prev = plan;
    if (plan === undefined || g !== planGroup) (plan = plans.get(g)!), (planGroup = g);
    const { pieces, vars } = plan;
    if (prev === undefined) parts.push(pieces[0]!);
    else {
      let join = prev.joins.get(plan);
      if (join === undefined) prev.joins.set(plan, (join = `${tail(prev)},${pieces[0]!}`));
      parts.push(join);
    }
    for (let v = 0; v < vars.length; v++) {
      const i = vars[v]!;
      const f = template[i]!;
      if (fromJson[i]) {
        if (!writeJson!(k, fields[i]!, parts)) parts.push(f.missing ?? 'null');
      } else parts.push(fieldJson(f, valueOf(k, fields[i]!)));
      if (v + 1 < vars.length) parts.push(pieces[v + 1]!);
    }
  }
  if (plan) parts.push(tail(plan));
  if (parts.length) write(parts.join(''));
}

/**
 * Parts (a sample is 11 to 17) joined into one piece: ~20-30 samples, a few KB, a string that stays
 * in the young generation. Joined per piece, a page cost less than joined whole (measured with the
 * pieces written into one buffer: 0.4 against 1.3 ms for 900 KB of text).
 */
const PIECE_PARTS = 256;

/** A group's fragments: before, between and after its varying fields (`vars`, template indexes); `joins`: its last fragment, a comma and another plan's first. */
type Plan = { pieces: string[]; vars: number[]; joins: Map<Plan, string> };

/** What a document of the plan ends with after its last varying field (none: its one fragment is all of it, written first). */
const tail = (p: Plan): string => (p.vars.length ? p.pieces[p.pieces.length - 1]! : '');
