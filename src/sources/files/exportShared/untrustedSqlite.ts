import { closeSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import { messageOf, UnreadableExportError } from './unreadableExport.js';
import { type SchemaRefusal, untrustedSchemaRefusal } from './untrustedSchema.js';

/**
 * SQLite files that came from a stranger, opened the one way both readers of them use (device-c's
 * Gadgetbridge upload, docs/formats/device-c.md, from a buffer; the Health Connect export here,
 * from a private file copy): the header is checked before SQLite sees the file, then the
 * connection is put under SQLite's advice for untrusted files (see `distrust`), virtual tables are
 * refused, then a schema that would make SQLite run the sender's expressions (untrustedSchema.ts:
 * CHECK constraints, generated columns beyond arithmetic, triggers, views, expression and partial
 * indexes, issue 34 §1), and only then does `PRAGMA quick_check` walk every page before anything is
 * read, so a damaged file is refused whole instead of failing halfway through a table. Each reader
 * words the refusals its own way.
 */

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
export const SQLITE_HEADER_BYTES = 100;
const MAX_REASON_BYTES = 512;

/** What the first 100 bytes say of a file of `size` bytes, before SQLite opens it. */
export type SqliteHeader = { kind: 'sqlite'; wal: boolean } | { kind: 'not_sqlite' } | { kind: 'truncated'; announced: number };

export function readSqliteHeader(header: Buffer, size: number): SqliteHeader {
  if (header.length < SQLITE_HEADER_BYTES || !header.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) return { kind: 'not_sqlite' };
  // A cut-off copy would fail table by table; say so once. The header's page count is valid when
  // its "version-valid-for" number equals the change counter (SQLite file format, 1.3).
  const pageSize = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16);
  const pageCount = header.readUInt32BE(28);
  if (pageCount > 0 && header.readUInt32BE(92) === header.readUInt32BE(24) && pageSize * pageCount > size) return { kind: 'truncated', announced: pageSize * pageCount };
  // Android keeps the live database in WAL mode (header bytes 18/19 = 2) and an export is the main
  // file alone: SQLite would look for a -wal file beside a copy, and cannot open an in-memory
  // database in WAL mode. The caller reads it as a rollback-journal file instead (bytes 1/1).
  return { kind: 'sqlite', wal: header[18] === 2 || header[19] === 2 };
}

/** Why a freshly opened stranger's database is refused, or null; the connection is left distrusted. */
export type SqliteRefusal = { kind: 'virtual_tables'; names: string[] } | SchemaRefusal | { kind: 'damaged'; problems: string[] };

/**
 * The order matters: virtual tables first (PRAGMA table_xinfo and index_list on one would connect
 * to its module), then the schema, and only a schema that passed reaches quick_check.
 */
export function distrustAndCheck(db: Database.Database): SqliteRefusal | null {
  distrust(db);
  db.prepare('SELECT count(*) FROM sqlite_master').get();
  return virtualTables(db) ?? untrustedSchemaRefusal(db) ?? corruption(db);
}

/** Opens an SQLite file: `path` must be a private copy, since a WAL-mode header is rewritten in it. */
export function openUntrustedDatabase(path: string, what: string): Database.Database {
  const header = Buffer.alloc(SQLITE_HEADER_BYTES);
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    const n = readSync(fd, header, 0, SQLITE_HEADER_BYTES, 0);
    const read = readSqliteHeader(header.subarray(0, n), size);
    if (read.kind === 'not_sqlite') throw new UnreadableExportError('database', `${what} is not an SQLite database (it does not start with the "SQLite format 3" header)`);
    if (read.kind === 'truncated') throw new UnreadableExportError('database', `${what} is truncated: its header announces ${read.announced} bytes, the file has ${size}`);
    if (read.wal) writeSync(fd, Buffer.from([1, 1]), 0, 2, 18);
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
    const refused = distrustAndCheck(db);
    if (refused?.kind === 'virtual_tables') throw new UnreadableExportError('database', cut(`${what} declares virtual tables (${refused.names.join(', ')}), which the app never creates`));
    if (refused?.kind === 'schema') throw new UnreadableExportError('database', cut(`${what} is refused before its integrity check: its schema declares ${refused.reasons.join('; ')}, which the app's database never holds (SQL of the sender's that SQLite would run)`));
    if (refused?.kind === 'damaged') throw new UnreadableExportError('database', cut(`${what} is damaged (SQLite's integrity check): ${refused.problems.join('; ')}`));
    return db;
  } catch (err) {
    db.close();
    if (err instanceof UnreadableExportError) throw err;
    const corrupt = (err as { code?: unknown }).code === 'SQLITE_CORRUPT' || (err as { code?: unknown }).code === 'SQLITE_NOTADB';
    throw new UnreadableExportError('database', `${what} ${corrupt ? 'is damaged' : 'cannot be read'}: ${messageOf(err)}`);
  }
}

/**
 * SQLite's advice for untrusted database files, as far as better-sqlite3 12 exposes it.
 *
 * - SQLITE_DBCONFIG_DEFENSIVE: better-sqlite3 switches it on when it opens a database, and its only
 *   handle on it is unsafeMode(false), which sets it again (there is no getter). Called so that
 *   the guarantee does not rest on a default that a later version or a stray unsafeMode() could change.
 * - trusted_schema = OFF: SQL stored in the file (views, triggers, generated columns, CHECK and
 *   DEFAULT expressions, expression indexes) may no longer call functions that are not marked
 *   innocuous nor use virtual tables that are not. None are registered on this connection today;
 *   this keeps it so for any that are added later.
 * - query_only = ON: on top of the read-only opening, no statement can write, so no trigger in the
 *   file can ever fire.
 * - cell_size_check = ON: a b-tree cell whose sizes do not add up is reported as corruption when
 *   read, instead of being trusted.
 * - ignore_check_constraints = ON: a second line behind the schema check (untrustedSchema.ts), so
 *   that quick_check never evaluates a CHECK expression of the file even if one slipped through;
 *   it does not cover the NOT NULL of a generated column (measured, issue 34 §1: 868 ms for 20
 *   rows), which only the schema check stops.
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
  db.pragma('ignore_check_constraints = ON');
}

/**
 * Virtual tables are refused, whatever their name: neither app creates one, and reading one, or
 * even checking the file's integrity (SQLite ≥ 3.44 runs the module's own xIntegrity check), runs
 * the module's code (FTS3/4/5, R*Tree, which trusted_schema allows) over shadow tables the sender
 * wrote. PRAGMA table_list
 * tells a virtual table from the parsed schema, without connecting to it, so the check cannot be
 * fooled by how the CREATE text is spelt.
 */
function virtualTables(db: Database.Database): SqliteRefusal | null {
  const virtual = (db.pragma('table_list') as { schema: string; name: string; type: string }[])
    .filter((t) => t.schema === 'main' && t.type === 'virtual')
    .map((t) => t.name);
  return virtual.length ? { kind: 'virtual_tables', names: virtual.sort() } : null;
}

/**
 * PRAGMA quick_check before anything is read: every page of every b-tree is walked once, so a
 * damaged file is one refusal instead of a read that stops halfway through a table after storing
 * its first rows (or, worse, reads garbage that still looks like rows). At most five problems are
 * named.
 */
function corruption(db: Database.Database): SqliteRefusal | null {
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
  return { kind: 'damaged', problems: said.slice(0, 5) };
}

/** A refusal's reason cut to 512 bytes on a character boundary. */
export function cut(s: string): string {
  const b = Buffer.from(s, 'utf8');
  return b.length <= MAX_REASON_BYTES ? s : b.subarray(0, MAX_REASON_BYTES).toString('utf8').replace(/\uFFFD+$/, '');
}

/** Double-quotes an SQL identifier. */
export function quoteIdentifier(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
