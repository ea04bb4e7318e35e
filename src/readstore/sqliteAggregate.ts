import type { AggregateQuery, AggregateRow, Scalar } from './readStore.js';
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
  if (query.limit !== undefined) {
    sql += ' LIMIT ?';
    params.push(query.limit);
  }
  return { sql, params };
}

/** One row of aggregateSql's statement as the port's AggregateRow. */
export function aggregateRow(query: AggregateQuery, r: Record<string, Scalar>): AggregateRow {
  return {
    group: Object.fromEntries(query.groupBy.map((f, i) => [f, r[`g${i}`] ?? null])),
    count: Number(r.n),
    sum: Object.fromEntries((query.sum ?? []).map((f, i) => [f, Number(r[`s${i}`] ?? 0)])),
    min: Object.fromEntries((query.min ?? []).map((f, i) => [f, r[`lo${i}`] ?? null])),
    max: Object.fromEntries((query.max ?? []).map((f, i) => [f, r[`hi${i}`] ?? null])),
  };
}
