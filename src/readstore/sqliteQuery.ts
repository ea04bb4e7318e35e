import { TIE_BREAKER, type Filter, type Scalar, type SortSpec } from './readStore.js';
import type { SqliteTable } from './sqliteTable.js';

/** SQLite keeps booleans as 1/0 (columns and JSON alike); parameters must match. */
export function sqlValue(v: Scalar): unknown {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

/** The WHERE clause of a port filter, MongoDB semantics: `null` matches null and missing, `$ne` matches missing. */
export function filterSql(t: SqliteTable, filter: Filter, params: unknown[]): string {
  const parts: string[] = [];
  for (const [field, cond] of Object.entries(filter)) {
    const expr = t.expr(field);
    if (cond === null || typeof cond !== 'object') {
      if (cond === null) parts.push(`${expr} IS NULL`);
      else {
        parts.push(`${expr} = ?`);
        params.push(sqlValue(cond));
      }
      continue;
    }
    if (cond.$eq !== undefined) {
      if (cond.$eq === null) parts.push(`${expr} IS NULL`);
      else {
        parts.push(`${expr} = ?`);
        params.push(sqlValue(cond.$eq));
      }
    }
    if (cond.$ne !== undefined) {
      parts.push(`${expr} IS NOT ?`);
      params.push(sqlValue(cond.$ne));
    }
    const ranges: [string, Scalar | undefined][] = [
      ['>', cond.$gt],
      ['>=', cond.$gte],
      ['<', cond.$lt],
      ['<=', cond.$lte],
    ];
    for (const [op, v] of ranges) {
      if (v === undefined) continue;
      parts.push(`${expr} ${op} ?`);
      params.push(sqlValue(v));
    }
    if (cond.$in !== undefined) {
      const nonNull = cond.$in.filter((v) => v !== null);
      const inSql = nonNull.length ? `${expr} IN (${nonNull.map(() => '?').join(',')})` : '0';
      params.push(...nonNull.map(sqlValue));
      parts.push(cond.$in.includes(null) ? `(${inSql} OR ${expr} IS NULL)` : inSql);
    }
    if (cond.$exists !== undefined) parts.push(cond.$exists ? t.existsExpr(field) : `NOT ${t.existsExpr(field)}`);
  }
  return parts.length ? parts.join(' AND ') : '1';
}

/** The WHERE clause of a filter and, after a cursor, one of its ranges (keysetBranches). */
export function whereSql(t: SqliteTable, filter: Filter, branch: KeysetBranch | null, params: unknown[]): string {
  const where = filterSql(t, filter, params);
  if (!branch) return where;
  params.push(...branch.params);
  return `${where} AND ${branch.sql}`;
}

export function orderSql(t: SqliteTable, sort: SortSpec): string {
  return sort.map(([f, d]) => `${t.expr(f)} ${d === -1 ? 'DESC' : 'ASC'}`).join(', ');
}

/** One range of the rows after a cursor, as a WHERE term and its parameters. */
export type KeysetBranch = { sql: string; params: unknown[] };

/**
 * The rows strictly after `after` in `sort` order, as disjoint ranges listed in that order: read
 * one after the other, each by an index range scan, until the page is full. NULL (and missing)
 * sorts first ascending and last descending, as in MongoDB; a row-value comparison cannot reach
 * it (a comparison with NULL is never true), so the ranges of NULLs are their own. Consecutive
 * ranges of one direction without NULLs between them merge into one row-value comparison, which
 * SQLite serves from an index: an ascending cursor without nulls is a single range.
 */
export function keysetBranches(t: SqliteTable, sort: SortSpec, after: readonly Scalar[]): KeysetBranch[] {
  if (after.length !== sort.length) throw new Error('cursor does not match the sort');
  const branches: KeysetBranch[] = [];
  const prefix = (to: number): KeysetBranch => {
    const sql: string[] = [];
    const params: unknown[] = [];
    for (let j = 0; j < to; j++) {
      if (after[j] === null) sql.push(`${t.expr(sort[j]![0])} IS NULL`);
      else {
        sql.push(`${t.expr(sort[j]![0])} = ?`);
        params.push(sqlValue(after[j]!));
      }
    }
    return { sql: sql.join(' AND '), params };
  };
  const and = (p: KeysetBranch, sql: string, params: unknown[]): KeysetBranch => ({ sql: p.sql ? `${p.sql} AND ${sql}` : sql, params: [...p.params, ...params] });
  // A row-value comparison over the fields start..end being extended towards the first field.
  let run: { start: number; end: number; dir: 1 | -1 } | null = null;
  const flush = () => {
    if (!run) return;
    const fields = sort.slice(run.start, run.end + 1).map(([f]) => t.expr(f));
    const values = after.slice(run.start, run.end + 1).map((v) => sqlValue(v as Scalar));
    const op = run.dir === 1 ? '>' : '<';
    const cmp = fields.length === 1 ? `${fields[0]} ${op} ?` : `(${fields.join(', ')}) ${op} (${values.map(() => '?').join(', ')})`;
    branches.push(and(prefix(run.start), cmp, values));
    run = null;
  };
  for (let i = sort.length - 1; i >= 0; i--) {
    const [field, dir] = sort[i]!;
    const value = after[i]!;
    const expr = t.expr(field);
    if (value === null) {
      flush();
      // Ascending, every value comes after the nulls; descending, nothing comes after them.
      if (dir === 1) branches.push(and(prefix(i), `${expr} IS NOT NULL`, []));
      continue;
    }
    if (run && run.start === i + 1 && run.dir === dir) run.start = i;
    else {
      flush();
      run = { start: i, end: i, dir };
    }
    // Descending, the nulls of this field come after its smaller values (the tie-breaker is never null).
    if (dir === -1 && field !== TIE_BREAKER) {
      flush();
      branches.push(and(prefix(i), `${expr} IS NULL`, []));
    }
  }
  flush();
  return branches;
}
