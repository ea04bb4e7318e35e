import type { Filter, SortSpec } from './readStore.js';
import type { RenderTemplate } from './renderedRows.js';
import { orderSql, whereSql, type KeysetBranch } from './sqliteQuery.js';
import { col, type SqliteTable } from './sqliteTable.js';

/**
 * What a row's JSON holds in place of a part SQL could not write exactly (a string field whose
 * column holds a number, a fraction whose shortest decimal SQLite cannot be trusted to write). No
 * JSON SQLite writes here holds the byte itself: keys are written by JSON.stringify, strings by
 * `json_quote` and the stored JSON by `->` (both escape every control character), so a page that
 * contains it holds a row to be written from its document instead.
 */
export const CANNOT_RENDER = '\u0001';
const cannot = 'char(1)';

/** Templates compiled per table shape and template (see compiledRender). */
const compiled = new WeakMap<SqliteTable, WeakMap<RenderTemplate, string>>();

/**
 * compileRender, once per table and template: a new shape (ensureCollections) is a new
 * SqliteTable, and templates are constants of the code, so both are held weakly and nothing
 * stale or unbounded is kept.
 */
export function compiledRender(t: SqliteTable, template: RenderTemplate): string {
  let byTemplate = compiled.get(t);
  if (!byTemplate) compiled.set(t, (byTemplate = new WeakMap()));
  let render = byTemplate.get(template);
  if (render === undefined) byTemplate.set(template, (render = compileRender(t, template)));
  return render;
}

const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/**
 * The JSON of a number as JSON.stringify writes it (the shortest decimal that reads back as the
 * same double), where SQLite can write the same text: an integral value below 2^53 as an integer
 * (SQLite alone would write 55 as `55.0`), and a fraction between 1e-4 and 1e15 whose 15
 * significant digits read back as the same double (then they are the shortest such digits, since
 * a shorter decimal that reads back would lie on the same 15-digit grid within less than its
 * spacing, and neither writes an exponent in that range). Anything else is CANNOT_RENDER.
 */
export function numberJsonSql(c: string): string {
  const fifteen = `printf('%!.15g', ${c})`;
  return `(CASE WHEN ${c} = CAST(${c} AS INTEGER) AND abs(${c}) < 9007199254740992 THEN CAST(CAST(${c} AS INTEGER) AS TEXT) WHEN abs(${c}) >= 0.0001 AND abs(${c}) < 1e15 AND CAST(${fifteen} AS REAL) = ${c} THEN ${fifteen} ELSE ${cannot} END)`;
}

/**
 * Compiles a rendering template (renderedRows.ts) for the embedded store: one SQL expression that
 * writes a row's whole JSON object, the bytes `renderDoc` writes of its document, or text holding
 * CANNOT_RENDER. SQLite writes every string (`json_quote`), boolean, number (numberJsonSql) and
 * stored JSON value (`->` on the `doc` column, which JSON.stringify wrote) itself, and the parts
 * are joined by one `concat`, so a page of rows reaches JavaScript as one value (issue 38).
 *
 * `doc` wins over a column wherever it holds the key (SqliteTable.decode): a boolean or a 0/1 kept
 * there beside the column. Whether it does is asked of the JSON only where the text holds the key
 * at all (`instr`, a key is written without spaces by JSON.stringify and a quote inside a string
 * is escaped), so rows without such copies (nearly all) never parse `doc` for it.
 */
export function compileRender(t: SqliteTable, template: RenderTemplate): string {
  const parts: string[] = [];
  template.forEach((f, i) => {
    parts.push(literal(`${i ? ',' : '{'}${JSON.stringify(f.key)}:`));
    const path = literal(`$.${f.field}`);
    const inDoc = `doc -> ${path}`;
    const type = `json_type(doc, ${path})`;
    const docHasKey = `(instr(doc, ${literal(`${JSON.stringify(f.field)}:`)}) > 0 AND ${type} IS NOT NULL)`;
    const missing = literal(f.missing ?? 'null');
    // What `doc` says of the field as a boolean (a boolean, null or missing; any other value is no boolean to write here).
    const docBoolean = `(CASE WHEN ${type} IS NULL THEN ${missing} ELSE (CASE ${type} WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' ELSE ${cannot} END) END)`;
    if (f.as === 'notTrue') {
      parts.push(t.isBoolean(f.field) ? `(CASE WHEN ${col(f.field)} = 1 AND NOT ${docHasKey} THEN 'false' ELSE 'true' END)` : `(CASE ${type} WHEN 'true' THEN 'false' ELSE 'true' END)`);
      return;
    }
    const fromDoc = f.as === 'boolean' ? docBoolean : `COALESCE(${inDoc}, ${missing})`;
    if (!t.isColumn(f.field)) {
      parts.push(fromDoc);
      return;
    }
    const c = col(f.field);
    // Text sorts after every number and before every blob (the columns have no affinity): two comparisons instead of a typeof() per field and row.
    const isText = `(${c} >= '' AND ${c} < x'')`;
    if (f.as === 'boolean') {
      // A boolean column holds 0/1 for a boolean, or a number (kept in `doc` too) whose truth renderDoc writes.
      const fromColumn = t.isBoolean(f.field) ? `(CASE WHEN ${c} = 0 THEN 'false' ELSE 'true' END)` : cannot;
      parts.push(`(CASE typeof(${c}) WHEN 'null' THEN ${fromDoc} WHEN 'text' THEN ${cannot} ELSE ${fromColumn} END)`);
    } else if (f.as === 'string') {
      parts.push(`(CASE WHEN ${isText} THEN json_quote(${c}) WHEN ${c} IS NULL THEN ${fromDoc} ELSE ${cannot} END)`);
    } else if (t.isBoolean(f.field)) {
      parts.push(`(CASE WHEN ${c} IS NULL THEN ${fromDoc} WHEN ${docHasKey} THEN ${inDoc} WHEN typeof(${c}) = 'text' THEN json_quote(${c}) WHEN ${c} = 1 THEN 'true' WHEN ${c} = 0 THEN 'false' ELSE ${cannot} END)`);
    } else {
      // better-sqlite3 binds every JavaScript number as a REAL, so 0/1 may be a boolean `doc` keeps.
      parts.push(`(CASE typeof(${c}) WHEN 'text' THEN json_quote(${c}) WHEN 'null' THEN ${fromDoc} ELSE (CASE WHEN ${c} IN (0, 1) AND ${docHasKey} THEN ${inDoc} ELSE ${numberJsonSql(c)} END) END)`);
    }
  });
  parts.push("'}'");
  return `concat(${parts.join(', ')})`;
}

/**
 * The statements of a rendered page (SqliteReadStore.findRenderedPage) over the rows of `filter`
 * in `sort` order from one cursor range, with `params` followed by one more each: `page` answers
 * the JSON of the first rows (the limit) joined by commas, and how many; `last` the sort
 * values of the row at an offset (the limit less one) and of the next, if any.
 */
export function renderedPageSql(t: SqliteTable, template: RenderTemplate, filter: Filter, sort: SortSpec, branch: KeysetBranch | null): { page: string; last: string; params: unknown[] } {
  const params: unknown[] = [];
  const rows = `FROM ${t.table} WHERE ${whereSql(t, filter, branch, params)} ORDER BY ${orderSql(t, sort)}`;
  return {
    // The rows reach group_concat in the subquery's order (its ORDER BY and LIMIT keep it from
    // being flattened into the aggregate); the tests read pages back against find's order.
    page: `SELECT group_concat(j, ','), count(*) FROM (SELECT ${compiledRender(t, template)} AS j ${rows} LIMIT ?)`,
    last: `SELECT ${sort.map(([f]) => t.expr(f)).join(', ')} ${rows} LIMIT 2 OFFSET ?`,
    params,
  };
}
