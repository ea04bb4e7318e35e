import type Database from 'better-sqlite3';
import { quoteIdentifier } from '../exportShared/untrustedSqlite.js';
import { COMMON_COLUMNS, selectList, type Row, type TableInfo } from './exportRows.js';

/**
 * A record table with a child table (heart-rate samples, sleep stages, route points): one query
 * joins them in parent order and child insertion order, and the rows are handed over parent by
 * parent, so only one parent's children are ever in memory (and at most `maxChildren` of them).
 * One statement, not one per parent: a hostile file without an index on `parent_key` costs SQLite
 * one automatic index, not a scan per parent.
 */

export type ParentWithChildren = { parent: Row; children: Row[]; dropped: number };

export function* parentsWithChildren(
  db: Database.Database,
  parent: TableInfo,
  parentColumns: readonly string[],
  child: TableInfo | undefined,
  childColumns: readonly string[],
  maxChildren: number,
): Generator<ParentWithChildren> {
  const p = selectList(parent, [...COMMON_COLUMNS, ...parentColumns], 'p');
  const joinable = child && child.columns.has('parent_key');
  const c = joinable ? `, c.rowid AS __child_rowid, ${childColumns.map((col) => (child.columns.has(col) ? `c.${quoteIdentifier(col)} AS ${quoteIdentifier(`__${col}`)}` : `NULL AS ${quoteIdentifier(`__${col}`)}`)).join(', ')}` : '';
  const join = joinable ? ` LEFT JOIN ${quoteIdentifier(child.name)} c ON c.parent_key = p.row_id` : '';
  const order = joinable ? ' ORDER BY p.row_id, c.rowid' : ' ORDER BY p.row_id';
  let current: ParentWithChildren | null = null;
  for (const row of db.prepare(`SELECT ${p}${c} FROM ${quoteIdentifier(parent.name)} p${join}${order}`).iterate() as Iterable<Row>) {
    if (!current || current.parent.row_id !== row.row_id) {
      if (current) yield current;
      current = { parent: row, children: [], dropped: 0 };
    }
    if (row.__child_rowid === null || row.__child_rowid === undefined) continue;
    if (current.children.length >= maxChildren) {
      current.dropped++;
      continue;
    }
    const childRow: Row = { rowid: row.__child_rowid };
    for (const col of childColumns) childRow[col] = row[`__${col}`];
    current.children.push(childRow);
  }
  if (current) yield current;
}
