import type { UpdateChange } from './readStore.js';
import { col, columnHoldsAll, type SqliteTable } from './sqliteTable.js';

/**
 * Upserts and counters as one statement each (docs/architecture.md "Read side"): the SQL of an
 * update's shape, planned once and cached by the store, and the parameters it binds.
 */

/** A top-level field name (a dotted path takes the read-modify-write path). */
const TOP_LEVEL = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The statement of one update shape. An upsert's conflict branch takes the set fields from the
 * row it tried to insert (`excluded`) and binds only the counters (inc, min twice, max twice);
 * a plain update binds the set fields held in columns, the counters, then the JSON of set values
 * kept in `doc`. Null when the shape needs the read-modify-write path.
 */
export function planFastUpdate(t: SqliteTable, c: UpdateChange): { sql: string } | null {
  const set = c.set ?? {};
  const counters = [...Object.keys(c.inc ?? {}), ...Object.keys(c.min ?? {}), ...Object.keys(c.max ?? {})];
  for (const f of [...Object.keys(set), ...Object.keys(c.setOnInsert ?? {})]) if (!TOP_LEVEL.test(f)) return null;
  for (const f of counters) if (!t.isColumn(f) || f in set) return null;
  for (const v of [...Object.values(c.min ?? {}), ...Object.values(c.max ?? {})]) if (!columnHoldsAll(v)) return null;

  // In an upsert's conflict branch the set values are those of the row it tried to insert.
  const upsert = !!c.upsert;
  const sets: string[] = [];
  const removes: string[] = [];
  const docSets: string[] = [];
  for (const [f, v] of Object.entries(set)) {
    if (v === undefined) continue;
    if (t.isColumn(f)) {
      sets.push(`${col(f)} = ${upsert ? `excluded.${col(f)}` : '?'}`);
      if (t.holdsAll(f, v)) {
        removes.push(`'$.${f}'`);
        continue;
      }
    }
    docSets.push(`'$.${f}', ${upsert ? `json(excluded.doc -> '$.${f}')` : 'json(?)'}`);
  }
  for (const f of Object.keys(c.inc ?? {})) {
    sets.push(`${col(f)} = COALESCE(${col(f)}, 0) + ?`);
    removes.push(`'$.${f}'`);
  }
  for (const [op, values] of [['<', c.min], ['>', c.max]] as const) {
    for (const f of Object.keys(values ?? {})) {
      sets.push(`${col(f)} = CASE WHEN ${col(f)} IS NULL OR ? ${op} ${col(f)} THEN ? ELSE ${col(f)} END`);
      removes.push(`'$.${f}'`);
    }
  }
  let docExpr = 'doc';
  if (removes.length) docExpr = `json_remove(${docExpr}, ${removes.join(', ')})`;
  if (docSets.length) docExpr = `json_set(${docExpr}, ${docSets.join(', ')})`;
  if (docExpr !== 'doc') sets.push(`doc = ${docExpr}`);
  if (!upsert) return { sql: sets.length ? `UPDATE ${t.table} SET ${sets.join(', ')} WHERE _id = ?` : '' };
  const insert = `INSERT INTO ${t.table} (${t.selectList}) VALUES (${['_id', ...t.columns, 'doc'].map(() => '?').join(', ')})`;
  return { sql: sets.length ? `${insert} ON CONFLICT(_id) DO UPDATE SET ${sets.join(', ')}` : `${insert} ON CONFLICT(_id) DO NOTHING` };
}

/** Parameters of the counter clauses, in the planned order: inc, then min and max (each twice). */
export function pushCounterParams(c: UpdateChange, params: unknown[]): void {
  if (c.inc) for (const v of Object.values(c.inc)) params.push(v);
  if (c.min) for (const v of Object.values(c.min)) params.push(v, v);
  if (c.max) for (const v of Object.values(c.max)) params.push(v, v);
}
