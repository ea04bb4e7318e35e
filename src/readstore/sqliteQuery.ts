import type { Filter, Scalar, SortSpec } from './readStore.js';
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

export function orderSql(t: SqliteTable, sort: SortSpec): string {
  return sort.map(([f, d]) => `${t.expr(f)} ${d === -1 ? 'DESC' : 'ASC'}`).join(', ');
}

/** Rows strictly after `after` in `sort` order. Uniform directions use a row-value comparison, which SQLite serves from an index. */
export function keysetSql(t: SqliteTable, sort: SortSpec, after: readonly Scalar[], params: unknown[]): string {
  if (after.length !== sort.length) throw new Error('cursor does not match the sort');
  const dirs = new Set(sort.map(([, d]) => d));
  if (dirs.size === 1) {
    const op = sort[0]![1] === 1 ? '>' : '<';
    params.push(...after.map(sqlValue));
    return `(${sort.map(([f]) => t.expr(f)).join(', ')}) ${op} (${after.map(() => '?').join(', ')})`;
  }
  const ors: string[] = [];
  for (let i = 0; i < sort.length; i++) {
    const ands: string[] = [];
    for (let j = 0; j < i; j++) {
      ands.push(`${t.expr(sort[j]![0])} = ?`);
      params.push(sqlValue(after[j]!));
    }
    ands.push(`${t.expr(sort[i]![0])} ${sort[i]![1] === 1 ? '>' : '<'} ?`);
    params.push(sqlValue(after[i]!));
    ors.push(`(${ands.join(' AND ')})`);
  }
  return `(${ors.join(' OR ')})`;
}
