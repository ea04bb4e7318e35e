import type { RenderTemplate } from './renderedRows.js';
import { col, type SqliteTable } from './sqliteTable.js';

/** A template compiled for one table: the SQL that writes each row's JSON, and the step that joins its parts. */
export type CompiledRender = {
  /** Select expressions: text parts and number slots alternating, text first and last. */
  selectList: string;
  /** How many select expressions the rendering takes (the row's sort values follow them). */
  width: number;
  /** A row's JSON, or null where a part could not be written in SQL (the caller renders that row's document). */
  join: (row: readonly unknown[]) => string | null;
};

/**
 * Templates compiled per table shape and template: a new shape (ensureCollections) is a new
 * SqliteTable, and templates are constants of the code, so both are held weakly and nothing stale
 * or unbounded is kept.
 */
const compiled = new WeakMap<SqliteTable, WeakMap<RenderTemplate, CompiledRender>>();

/** compileRender, once per table and template. */
export function compiledRender(t: SqliteTable, template: RenderTemplate): CompiledRender {
  let byTemplate = compiled.get(t);
  if (!byTemplate) compiled.set(t, (byTemplate = new WeakMap()));
  let render = byTemplate.get(template);
  if (!render) byTemplate.set(template, (render = compileRender(t, template)));
  return render;
}

const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/**
 * Compiles a rendering template (renderedRows.ts) for the embedded store. SQLite writes the JSON of
 * every string, boolean and stored JSON value itself (`json_quote`, and the `doc` column's own
 * text for fields kept there, which is what JSON.stringify wrote), so a row reaches JavaScript as
 * a few strings instead of a document. Numbers are the exception: SQLite would write 55 as `55.0`
 * and a fraction with 15 digits, so a number column is a slot that JavaScript writes with
 * JSON.stringify (shortest round trip, as the documents' path writes it).
 *
 * A value a part cannot write exactly (a string field whose column holds a number) makes the
 * part NULL, and the row is rendered from its document instead: rare, and never different.
 */
export function compileRender(t: SqliteTable, template: RenderTemplate): CompiledRender {
  const parts: string[] = [];
  let text: string[] = [];
  const flush = () => {
    parts.push(text.length ? text.join(' || ') : "''");
    text = [];
  };
  template.forEach((f, i) => {
    text.push(literal(`${i ? ',' : '{'}${JSON.stringify(f.key)}:`));
    const path = literal(`$.${f.field}`);
    const inDoc = `doc -> ${path}`;
    const type = `json_type(doc, ${path})`;
    const missing = literal(f.missing ?? 'null');
    // What `doc` says of the field: it wins over the column wherever it holds the key (SqliteTable.decode).
    const docBoolean = `(CASE ${type} WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' ELSE (CASE WHEN ${type} IS NULL THEN ${missing} END) END)`;
    if (f.as === 'notTrue') {
      text.push(t.isBoolean(f.field) ? `(CASE WHEN ${col(f.field)} = 1 AND ${type} IS NULL THEN 'false' ELSE 'true' END)` : `(CASE ${type} WHEN 'true' THEN 'false' ELSE 'true' END)`);
      return;
    }
    if (!t.isColumn(f.field)) {
      text.push(f.as === 'boolean' ? docBoolean : `COALESCE(${inDoc}, ${missing})`);
      return;
    }
    const c = col(f.field);
    if (f.as === 'boolean') {
      const fromColumn = t.isBoolean(f.field) ? `(CASE WHEN ${type} IS NOT NULL THEN NULL WHEN ${c} = 0 THEN 'false' ELSE 'true' END)` : 'NULL';
      // better-sqlite3 binds every JavaScript number as a REAL: 0/1 are 'real' as often as 'integer'.
      text.push(`(CASE typeof(${c}) WHEN 'null' THEN ${docBoolean} WHEN 'integer' THEN ${fromColumn} WHEN 'real' THEN ${fromColumn} END)`);
    } else if (f.as === 'string') {
      text.push(`(CASE typeof(${c}) WHEN 'text' THEN json_quote(${c}) WHEN 'null' THEN COALESCE(${inDoc}, ${missing}) END)`);
    } else if (t.isBoolean(f.field)) {
      text.push(`(CASE WHEN ${type} IS NOT NULL THEN ${inDoc} WHEN ${c} IS NULL THEN ${missing} WHEN typeof(${c}) = 'text' THEN json_quote(${c}) WHEN ${c} = 1 THEN 'true' WHEN ${c} = 0 THEN 'false' END)`);
    } else {
      // A number in a column is a slot JavaScript writes; a 0 or 1 may be a boolean `doc` keeps.
      flush();
      parts.push(`(CASE typeof(${c}) WHEN 'text' THEN json_quote(${c}) WHEN 'null' THEN COALESCE(${inDoc}, ${missing}) ELSE (CASE WHEN ${c} IN (0, 1) AND ${type} IS NOT NULL THEN ${inDoc} ELSE ${c} END) END)`);
    }
  });
  text.push("'}'");
  flush();
  const width = parts.length;
  return {
    selectList: parts.join(', '),
    width,
    join: (row) => {
      let out = row[0] as string | null;
      if (out === null) return null;
      for (let i = 1; i < width; i += 2) {
        const v = row[i];
        const after = row[i + 1] as string | null;
        if (after === null || v === null) return null;
        out += typeof v === 'number' ? JSON.stringify(v) : (v as string);
        out += after;
      }
      return out;
    },
  };
}
