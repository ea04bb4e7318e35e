import { closeSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import { messageOf, UnreadableExportError } from './unreadableExport.js';

/**
 * Opens an SQLite file that came from a stranger, the way device-c opens a Gadgetbridge database
 * (src/connectors/devices/deviceC/gadgetbridgeParser.ts, docs/formats/device-c.md): read-only,
 * SQLite's defensive mode, `trusted_schema = OFF`, `query_only = ON`, `cell_size_check = ON`, no
 * virtual tables (their modules would run over pages the sender wrote), and `PRAGMA quick_check`
 * over every page before anything is read, so a damaged file is refused whole instead of failing
 * halfway through a table. The file must be a private copy: a WAL-mode header is rewritten in it
 * (see below).
 */

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const HEADER_BYTES = 100;
const MAX_REASON_BYTES = 512;

export function openUntrustedDatabase(path: string, what: string): Database.Database {
  const header = Buffer.alloc(HEADER_BYTES);
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    const n = readSync(fd, header, 0, HEADER_BYTES, 0);
    if (n < HEADER_BYTES || !header.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
      throw new UnreadableExportError('database', `${what} is not an SQLite database (it does not start with the "SQLite format 3" header)`);
    }
    // A cut-off copy would fail table by table; say so once. The header's page count is valid when
    // its "version-valid-for" number equals the change counter (SQLite file format, 1.3).
    const pageSize = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16);
    const pageCount = header.readUInt32BE(28);
    if (pageCount > 0 && header.readUInt32BE(92) === header.readUInt32BE(24) && pageSize * pageCount > size) {
      throw new UnreadableExportError('database', `${what} is truncated: its header announces ${pageSize * pageCount} bytes, the file has ${size}`);
    }
    // Android keeps the live database in WAL mode (header bytes 18/19 = 2) and the export is the
    // main file alone. Opened as is, SQLite would look for a -wal file beside the copy; read as a
    // rollback-journal file instead (bytes 1/1). Only the private copy is changed.
    if (header[18] === 2 || header[19] === 2) writeSync(fd, Buffer.from([1, 1]), 0, 2, 18);
  } finally {
    closeSync(fd);
  }

  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new UnreadableExportError('database', `${what} cannot be opened: ${messageOf(err)}`);
  }
  try {
    distrust(db);
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    const refused = virtualTables(db, what) ?? corruption(db, what);
    if (refused) throw new UnreadableExportError('database', refused);
    return db;
  } catch (err) {
    db.close();
    if (err instanceof UnreadableExportError) throw err;
    const corrupt = (err as { code?: unknown }).code === 'SQLITE_CORRUPT' || (err as { code?: unknown }).code === 'SQLITE_NOTADB';
    throw new UnreadableExportError('database', `${what} ${corrupt ? 'is damaged' : 'cannot be read'}: ${messageOf(err)}`);
  }
}

/** SQLite's advice for untrusted database files, as far as better-sqlite3 exposes it (see device-c). */
function distrust(db: Database.Database): void {
  db.unsafeMode(false);
  db.pragma('trusted_schema = OFF');
  db.pragma('query_only = ON');
  db.pragma('cell_size_check = ON');
}

function virtualTables(db: Database.Database, what: string): string | null {
  const virtual = (db.pragma('table_list') as { schema: string; name: string; type: string }[])
    .filter((t) => t.schema === 'main' && t.type === 'virtual')
    .map((t) => t.name);
  if (!virtual.length) return null;
  return cut(`${what} declares virtual tables (${virtual.sort().join(', ')}), which the app never creates`);
}

function corruption(db: Database.Database, what: string): string | null {
  let problems: string[];
  try {
    problems = (db.pragma('quick_check') as { quick_check: string }[]).map((r) => r.quick_check);
  } catch (err) {
    // Damage bad enough stops the check itself.
    problems = [messageOf(err)];
  }
  if (problems.length === 1 && problems[0] === 'ok') return null;
  const said = problems
    .join('\n')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !/^\*\*\* in database \w+ \*\*\*$/.test(line));
  return cut(`${what} is damaged (SQLite's integrity check): ${said.slice(0, 5).join('; ')}`);
}

function cut(s: string): string {
  const b = Buffer.from(s, 'utf8');
  return b.length <= MAX_REASON_BYTES ? s : b.subarray(0, MAX_REASON_BYTES).toString('utf8').replace(/\uFFFD+$/, '');
}

/** Double-quotes an SQL identifier. */
export function quoteIdentifier(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
