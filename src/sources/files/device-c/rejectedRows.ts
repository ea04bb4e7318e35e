import type { RejectedItem } from '../../../../commands/ingestion/records.js';
import type { Row, TableInfo } from './sqliteExport.js';
import { truncateBytes } from './values.js';

/** A row that cannot be stored: where it is (its rowid, or its primary key) and a readable excerpt. */

export function rejectRow(table: TableInfo, row: Row, reason: string): RejectedItem {
  const { __rowid, ...values } = row;
  let location: string;
  if (__rowid !== undefined && __rowid !== null) location = `${table.name}:${String(__rowid)}`;
  else {
    const key = table.pk.length ? table.pk : ['TIMESTAMP', 'DEVICE_ID'];
    location = `${table.name}:${key.map((c) => `${c}=${String(values[c])}`).join(',')}`;
  }
  return { location, reason, excerpt: rowExcerpt(values) };
}

export function rowExcerpt(row: Row): string {
  const plain: Row = {};
  for (const [k, v] of Object.entries(row)) {
    plain[k] = Buffer.isBuffer(v) ? `<blob ${v.length} bytes>` : typeof v === 'bigint' ? v.toString() : v;
  }
  return truncateBytes(JSON.stringify(plain));
}
