import Database from 'better-sqlite3';
import { messageOf, truncateBytes } from './values.js';

/** Opening the export (a stranger's SQLite file) defensively, and reading its schema. */

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

export type Row = Record<string, unknown>;
export type TableInfo = { name: string; columns: Set<string>; pk: string[]; withoutRowid: boolean };

export function q(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

export type Opened = { db: Database.Database } | { error: string };

export function openExport(payload: Buffer): Opened {
  if (payload.length === 0) return { error: 'empty upload: expected the Gadgetbridge database export (SQLite file)' };
  if (payload.length >= 4 && payload.subarray(0, 4).equals(ZIP_MAGIC)) {
    return { error: 'a ZIP archive, not the database: upload the SQLite file that Gadgetbridge\'s "Export DB" writes (named Gadgetbridge)' };
  }
  if (payload.length < 100 || !payload.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
    return { error: 'not a SQLite database: the upload does not start with the "SQLite format 3" header' };
  }
  // A cut-off file would fail table by table; say so once. The header's page count is valid
  // when its "version-valid-for" number equals the change counter (SQLite file format 1.3).
  const pageSize = payload.readUInt16BE(16) === 1 ? 65536 : payload.readUInt16BE(16);
  const pageCount = payload.readUInt32BE(28);
  if (pageCount > 0 && payload.readUInt32BE(92) === payload.readUInt32BE(24) && pageSize * pageCount > payload.length) {
    return { error: `truncated SQLite database: the header announces ${pageSize * pageCount} bytes, the upload has ${payload.length}` };
  }
  // Android keeps the app's database in WAL mode (header bytes 18/19 = 2). The export is the main
  // file alone, and an in-memory database cannot be opened in WAL mode: read it as a rollback-
  // journal file. The bytes are patched only while better-sqlite3 copies the buffer into SQLite.
  const wal = payload[18] === 2 || payload[19] === 2;
  const saved = [payload[18]!, payload[19]!] as const;
  let db: Database.Database;
  try {
    if (wal) {
      payload[18] = 1;
      payload[19] = 1;
    }
    db = new Database(payload, { readonly: true });
  } catch (err) {
    return { error: `unreadable SQLite database: ${messageOf(err)}` };
  } finally {
    if (wal) {
      payload[18] = saved[0];
      payload[19] = saved[1];
    }
  }
  try {
    distrust(db);
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    const refused = refusedSchema(db) ?? corruption(db);
    if (refused === null) return { db };
    db.close();
    return { error: refused };
  } catch (err) {
    db.close();
    return { error: `unreadable SQLite database: ${messageOf(err)}` };
  }
}

/**
 * The file comes from a stranger: SQLite's advice for untrusted database files, as far as
 * better-sqlite3 12 exposes it.
 *
 * - SQLITE_DBCONFIG_DEFENSIVE: better-sqlite3 switches it on when it opens a database, and its only
 *   handle on it is unsafeMode(false), which sets it again (there is no getter). Called so that
 *   the guarantee does not rest on a default that a later version or a stray unsafeMode() could change.
 * - trusted_schema = OFF: SQL stored in the file (views, triggers, generated columns, CHECK and
 *   DEFAULT expressions, expression indexes) may no longer call functions that are not marked
 *   innocuous nor use virtual tables that are not. None are registered on this connection today;
 *   this keeps it so for any that are added later.
 * - query_only = ON: on top of the read-only deserialisation, no statement can write, so no
 *   trigger in the file can ever fire.
 * - cell_size_check = ON: a b-tree cell whose sizes do not add up is reported as corruption when
 *   read, instead of being trusted.
 *
 * Not available from JavaScript: sqlite3_limit() (better-sqlite3 only lowers SQLITE_LIMIT_LENGTH
 * and SQLITE_LIMIT_SQL_LENGTH itself) and a per-connection heap limit (PRAGMA hard_heap_limit is
 * process-wide and would cap every other database of the process). mmap_size does not apply to a
 * deserialised in-memory database.
 */
function distrust(db: Database.Database): void {
  db.unsafeMode(false);
  db.pragma('trusted_schema = OFF');
  db.pragma('query_only = ON');
  db.pragma('cell_size_check = ON');
}

/**
 * Virtual tables are refused, whatever their name: greenDAO never creates one, and reading one, or
 * even checking the file's integrity (SQLite ≥ 3.44 runs the module's own xIntegrity check), runs
 * the module's code (FTS3/4/5, R*Tree, which trusted_schema allows) over shadow tables the sender
 * wrote. Views and triggers are left alone: the parser reads only what the schema lists as tables
 * (a view can never stand in for one of them: a name is a table or a view, never both), and
 * triggers only fire on writes. PRAGMA table_list tells a virtual table from the parsed schema,
 * without connecting to it, so the check cannot be fooled by how the CREATE text is spelt.
 */
function refusedSchema(db: Database.Database): string | null {
  const virtual = (db.pragma('table_list') as { schema: string; name: string; type: string }[])
    .filter((t) => t.schema === 'main' && t.type === 'virtual')
    .map((t) => t.name);
  if (!virtual.length) return null;
  return `not a Gadgetbridge export: the database declares virtual tables (${virtual.sort().join(', ')}), which the app never creates`;
}

/**
 * PRAGMA quick_check before anything is read: every page of every b-tree is walked once, so a
 * damaged file is one rejected item instead of a parse that stops halfway through a table after
 * storing its first rows (or, worse, reads garbage that still looks like rows).
 */
function corruption(db: Database.Database): string | null {
  const problems = (db.pragma('quick_check') as { quick_check: string }[]).map((r) => r.quick_check);
  if (problems.length === 1 && problems[0] === 'ok') return null;
  const said = problems
    .join('\n')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !/^\*\*\* in database \w+ \*\*\*$/.test(line));
  return truncateBytes(`corrupt SQLite database: ${said.slice(0, 5).join('; ')}`, 512);
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
