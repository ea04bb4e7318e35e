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

/** Null: that shape takes the read-modify-write path. */
type Plan = { sql: string } | null;

/** The plans of the update shapes a store has met (SqliteReadStore.fastUpdate), at most `limit` of them at a time. */
export class UpdatePlans {
  private readonly plans = new Map<string, Plan>();
  /** The shape `of` answered last, and its plan. */
  private last: { t: SqliteTable; upsert: boolean; fields: readonly string[]; marks: readonly string[]; others: readonly (readonly string[] | undefined)[]; plan: Plan } | null = null;

  constructor(private readonly limit: number) {}

  /** Forgets every plan (the tables' shapes changed). */
  clear(): void {
    this.plans.clear();
    this.last = null;
  }

  /**
   * The plan of an update's shape. Consecutive updates mostly share one (a batch's record
   * upserts): the shape last planned is compared field by field first, which spares writing and
   * hashing its text for every row (4 µs a record upsert; docs/rebuild.md).
   */
  of(t: SqliteTable, c: UpdateChange, set: Readonly<Record<string, unknown>>, setFields: readonly string[]): { sql: string } | null {
    const last = this.last;
    const others = [c.inc, c.min, c.max, c.setOnInsert];
    if (last && last.t === t && last.upsert === !!c.upsert && last.fields.length === setFields.length && others.every((o, i) => sameKeys(o, last.others[i]))) {
      let same = true;
      for (let i = 0; same && i < setFields.length; i++) same = setFields[i] === last.fields[i] && fieldMark(t, setFields[i]!, set[setFields[i]!]) === last.marks[i];
      if (same) return last.plan;
    }
    const marks = setFields.map((f) => fieldMark(t, f, set[f]));
    let shape = `${c.upsert ? 'u' : 'n'}|${t.spec.name}|`;
    setFields.forEach((f, i) => (shape += `${f}${marks[i]},`));
    others.forEach((o, i) => {
      if (o) shape += `|${'ilho'[i]}${Object.keys(o).join(',')}`;
    });
    let plan = this.plans.get(shape);
    if (plan === undefined) {
      plan = planFastUpdate(t, c);
      if (this.plans.size > this.limit) this.plans.clear();
      this.plans.set(shape, plan);
    }
    this.last = { t, upsert: !!c.upsert, fields: setFields, marks, others: others.map((o) => (o ? Object.keys(o) : undefined)), plan };
    return plan;
  }
}

/** How an update's plan treats a set field: absent (undefined), in its column alone, or (also) in `doc`. */
function fieldMark(t: SqliteTable, f: string, v: unknown): string {
  return v === undefined ? '_' : t.isColumn(f) && t.holdsAll(f, v) ? '=' : '~';
}

/** Whether `o` is absent where `keys` is, or has exactly those fields in that order. */
function sameKeys(o: Readonly<Record<string, unknown>> | undefined, keys: readonly string[] | undefined): boolean {
  if (!o || !keys) return !o && !keys;
  const mine = Object.keys(o);
  return mine.length === keys.length && mine.every((k, i) => k === keys[i]);
}
