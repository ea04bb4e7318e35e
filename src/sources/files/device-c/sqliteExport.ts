import Database from 'better-sqlite3';
import { distrustAndCheck, quoteIdentifier, readSqliteHeader, SQLITE_HEADER_BYTES } from '../exportShared/untrustedSqlite.js';
import { messageOf, truncateBytes } from './values.js';

/** Opening the export (a stranger's SQLite file) defensively, and reading its schema. */

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

export type Row = Record<string, unknown>;
export type TableInfo = { name: string; columns: Set<string>; pk: string[]; withoutRowid: boolean };

export const q = quoteIdentifier;

export type Opened = { db: Database.Database } | { error: string };

/** The upload deserialised into an in-memory database, under the shared defences for a stranger's SQLite file. */
export function openExport(payload: Buffer): Opened {
  if (payload.length === 0) return { error: 'empty upload: expected the Gadgetbridge database export (SQLite file)' };
  if (payload.length >= 4 && payload.subarray(0, 4).equals(ZIP_MAGIC)) {
    return { error: 'a ZIP archive, not the database: upload the SQLite file that Gadgetbridge\'s "Export DB" writes (named Gadgetbridge)' };
  }
  const header = readSqliteHeader(payload.subarray(0, SQLITE_HEADER_BYTES), payload.length);
  if (header.kind === 'not_sqlite') return { error: 'not a SQLite database: the upload does not start with the "SQLite format 3" header' };
  if (header.kind === 'truncated') return { error: `truncated SQLite database: the header announces ${header.announced} bytes, the upload has ${payload.length}` };
  // The bytes are patched only while better-sqlite3 copies the buffer into SQLite.
  const saved = [payload[18]!, payload[19]!] as const;
  let db: Database.Database;
  try {
    if (header.wal) {
      payload[18] = 1;
      payload[19] = 1;
    }
    db = new Database(payload, { readonly: true });
  } catch (err) {
    return { error: `unreadable SQLite database: ${messageOf(err)}` };
  } finally {
    if (header.wal) {
      payload[18] = saved[0];
      payload[19] = saved[1];
    }
  }
  try {
    const refused = distrustAndCheck(db);
    if (refused === null) return { db };
    db.close();
    if (refused.kind === 'virtual_tables') return { error: `not a Gadgetbridge export: the database declares virtual tables (${refused.names.join(', ')}), which the app never creates` };
    if (refused.kind === 'schema') return { error: truncateBytes(`not a Gadgetbridge export, refused before its integrity check: the database declares ${refused.reasons.join('; ')}, which the app never creates (SQL of the sender's that SQLite would run)`, 512) };
    return { error: truncateBytes(`corrupt SQLite database: ${refused.problems.join('; ')}`, 512) };
  } catch (err) {
    db.close();
    return { error: `unreadable SQLite database: ${messageOf(err)}` };
  }
}

export function readTables(db: Database.Database): Map<string, TableInfo> {
  const tables = new Map<string, TableInfo>();
  const rows = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table'`).all() as { name: string; sql: string | null }[];
  for (const { name, sql } of rows) {
    const info = db.prepare(`PRAGMA table_info(${q(name)})`).all() as { name: string; pk: number }[];
    const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    tables.set(name, { name, columns: new Set(info.map((c) => c.name)), pk, withoutRowid: /\bWITHOUT\s+ROWID\b/i.test(sql ?? '') });
  }
  return tables;
}

export function isSampleTable(t: TableInfo): boolean {
  return t.name.toUpperCase().endsWith('ACTIVITY_SAMPLE') && ['TIMESTAMP', 'DEVICE_ID', 'STEPS'].every((c) => t.columns.has(c));
}

export function hasColumns(t: TableInfo | undefined, ...columns: string[]): t is TableInfo {
  return !!t && columns.every((c) => t.columns.has(c));
}
