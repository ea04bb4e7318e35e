import type { AggregateQuery, AggregateRow, JoinBytesQuery, JoinedBytes, Scalar } from './readStore.js';
import { limitSql } from '../shared/sqliteLimit.js';
import { filterSql } from './sqliteQuery.js';
import type { SqliteTable } from './sqliteTable.js';

/** The statement of ReadStore.aggregate on one table: the groups, their count, sums, minima and maxima, in group order. */
export function aggregateSql(t: SqliteTable, query: AggregateQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const cols: string[] = query.groupBy.map((f, i) => `${t.expr(f)} AS g${i}`);
  cols.push('COUNT(*) AS n');
  (query.sum ?? []).forEach((f, i) => cols.push(`TOTAL(${t.expr(f)}) AS s${i}`));
  (query.min ?? []).forEach((f, i) => cols.push(`MIN(${t.expr(f)}) AS lo${i}`));
  (query.max ?? []).forEach((f, i) => cols.push(`MAX(${t.expr(f)}) AS hi${i}`));
  const groups = query.groupBy.map((_, i) => `g${i}`).join(', ');
  let sql = `SELECT ${cols.join(', ')} FROM ${t.table} WHERE ${filterSql(t, query.filter ?? {}, params)}`;
  if (groups) sql += ` GROUP BY ${groups} ORDER BY ${groups}`;
  // Written in, not bound: a bound limit makes SQLite prepare the statement again at every run (src/shared/sqliteLimit.ts).
  if (query.limit !== undefined) sql += ` ${limitSql(query.limit)}`;
  return { sql, params };
}

/**
 * One row of aggregateSql's statement, read raw (its columns in the statement's order), as the
 * port's AggregateRow. Built field by field: no pairs of entries per row to collect.
 */
export function aggregateRow(query: AggregateQuery, r: readonly unknown[]): AggregateRow {
  let i = 0;
  const group: Record<string, Scalar> = {};
  for (const f of query.groupBy) group[f] = (r[i++] ?? null) as Scalar;
  const count = Number(r[i++]);
  const sum: Record<string, number> = {};
  for (const f of query.sum ?? []) sum[f] = Number(r[i++] ?? 0);
  const min: Record<string, Scalar> = {};
  for (const f of query.min ?? []) min[f] = (r[i++] ?? null) as Scalar;
  const max: Record<string, Scalar> = {};
  for (const f of query.max ?? []) max[f] = (r[i++] ?? null) as Scalar;
  return { group, count, sum, min, max };
}

/**
 * The statement of ReadStore.joinBytes on one table: per group, its values and the bytes of the
 * field joined by `group_concat`, one BLOB a group. SQLite has no aggregate that joins BLOBs; a BLOB
 * cast to TEXT keeps its bytes in a UTF-8 database (this store's files are), `group_concat` appends
 * each value's bytes whole (embedded zero bytes included), and the cast back to BLOB keeps them again.
 * Only BLOB values are joined (`typeof`), so a document holding anything else there is left out.
 */
export function joinBytesSql(t: SqliteTable, query: JoinBytesQuery): { sql: string; params: unknown[] } {
  if (!t.isColumn(query.field)) throw new Error(`joinBytes: ${query.field} is not a declared column of ${t.table}`);
  const params: unknown[] = [];
  const field = t.expr(query.field);
  const cols: string[] = query.groupBy.map((f, i) => `${t.expr(f)} AS g${i}`);
  cols.push(`CAST(group_concat(CAST(${field} AS TEXT), '') AS BLOB)`);
  const groups = query.groupBy.map((_, i) => `g${i}`).join(', ');
  let sql = `SELECT ${cols.join(', ')} FROM ${t.table} WHERE ${filterSql(t, query.filter ?? {}, params)} AND typeof(${field}) = 'blob'`;
  if (groups) sql += ` GROUP BY ${groups} ORDER BY ${groups}`;
  return { sql, params };
}

/** The rows of joinBytesSql's statement (raw: group values, then the bytes) as the port's groups; a group with no bytes (no row matched) is left out. */
export function joinedBytesOf(query: JoinBytesQuery, rows: readonly unknown[][]): JoinedBytes[] {
  const n = query.groupBy.length;
  const out: JoinedBytes[] = [];
  for (const r of rows) {
    if (!(r[n] instanceof Uint8Array)) continue;
    out.push({ group: Object.fromEntries(query.groupBy.map((f, i) => [f, r[i] as Scalar])), bytes: r[n] as Buffer });
  }
  return out;
}
