import type Database from 'better-sqlite3';
import { isBusy } from './sqliteWriteLock.js';
import { emptyWriteAheadLogBlocking } from './sqlitePurge.js';

/**
 * What a scrub (sqliteScrub.ts) works from, kept in the file it scrubs: the tables an erasure
 * deleted rows from since the last scrub (`marks` grows with each erasure, so a scrub clears only
 * the marks it saw), and one lease, so that two processes on the same file never scrub it at once.
 */
export const SCRUB_DDL = `
  CREATE TABLE IF NOT EXISTS _scrub_due (tbl TEXT PRIMARY KEY, marks INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS _scrub_lease (id INTEGER PRIMARY KEY, holder TEXT NOT NULL, until_ms INTEGER NOT NULL)`;

const MARK_SQL = 'INSERT INTO _scrub_due (tbl, marks) VALUES (?, 1) ON CONFLICT(tbl) DO UPDATE SET marks = marks + 1';

/** Notes, inside the transaction of an erasure's deletion, that `table` must be scrubbed. */
export function markForScrub(db: Database.Database, table: string): void {
  db.prepare(MARK_SQL).run(table);
}

const NEW_PREFIX = '_scrub_new_';
const OLD_PREFIX = '_scrub_old_';
const TRIGGER_PREFIX = '_scrub_t';
const TWIN_SUFFIX = '__s';

/**
 * A scrubbed table's indexes are built beside it under their twin names (SQLite cannot rename an
 * index), so an index is under its name or its twin's, alternately, one scrub after the other.
 */
export const twinIndexName = (name: string): string => (name.endsWith(TWIN_SUFFIX) ? name.slice(0, -TWIN_SUFFIX.length) : name + TWIN_SUFFIX);

/**
 * Runs `CREATE [UNIQUE] INDEX IF NOT EXISTS <name> ON …` unless the index is there under its twin
 * name (a scrub rebuilt its table): schema code creates indexes through this, never directly.
 */
export function ensureIndex(db: Database.Database, sql: string): void {
  const name = /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+IF\s+NOT\s+EXISTS\s+([A-Za-z_][\w$]*)\s/i.exec(sql)?.[1];
  if (!name) throw new Error(`not an index this store creates: ${sql.slice(0, 80)}`);
  const present = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name IN (?, ?)").get(name, twinIndexName(name));
  if (!present) db.exec(sql);
}

/** A quoted name; `rowid` stays bare, since quoted it would name a column. */
const q = (name: string) => (name === 'rowid' ? name : `"${name.replace(/"/g, '""')}"`);

export type ScrubOptions = {
  /** Sleeps the calling thread (the scrub's own): the pauses between transactions, where other connections write. */
  sleep: (ms: number) => void;
  /** Who holds the lease (a process and thread of its own). */
  holder: string;
  /** How long one transaction of the scrub may hold the write lock, aimed at (the work per transaction adapts to it). */
  holdMs?: number;
  /**
   * Run after each of the scrub's commits, in its pause (the thread's: a passive checkpoint of what
   * the scrub wrote, so that the others' commits do not pay for folding it into the file).
   */
  afterCommit?: () => void;
  now?: () => number;
};

export type ScrubReport = {
  tables: string[];
  transactions: number;
  longestHoldMs: number;
  /** Which step held the lock longest (`copy`, `swap`, `empty`, …): where to look when it is long. */
  longestHoldIn: string;
};

const LEASE_MS = 60_000;
const DEFAULT_HOLD_MS = 25;
const MIN_PAUSE_MS = 5;

/** One short write transaction of the scrub, named by its step. */
type Hold = <T>(step: string, work: () => T) => T;

type Shape = {
  /** Stored columns, in order (generated columns are computed, never copied). */
  columns: string[];
  /** What orders and identifies a row: `rowid`, its alias, or a WITHOUT ROWID table's primary key. */
  key: string[];
  /** The column list of a copy: the key first when it is the bare rowid. */
  copied: string[];
  autoincrement: boolean;
};

/**
 * One scrub of a SQLite file: every table an erasure marked is rebuilt in a copy of itself, and the
 * old table emptied and dropped, so that no byte of a row deleted before the scrub started stays
 * in the file; then the write-ahead log is emptied. Why a rebuild at all: `secure_delete` zeroes a
 * deleted row and every freed page, but the copies that B-tree rebalancing left in the unused
 * middle of live pages stay (docs/erasure.md, "Physical deletion"). Pages freed by the drop are
 * zeroed (`secure_delete`); the rebuilt table holds only live rows.
 *
 * No transaction holds the write lock for longer than about `holdMs`: the copy and the emptying go
 * a few rows at a time, the clock read after each few (withinBudget), with a pause as long after
 * each transaction, in which other connections write; writes to the table meanwhile reach the
 * copy by triggers. A lock found taken is waited for outside any transaction. (VACUUM, which this
 * replaces, held the lock for the whole rewrite: seconds at a million samples, minutes at 100M.)
 */
export function scrubPass(db: Database.Database, options: ScrubOptions): ScrubReport {
  const now = options.now ?? Date.now;
  const holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
  const report: ScrubReport = { tables: [], transactions: 0, longestHoldMs: 0, longestHoldIn: '' };
  const held: Hold = (step, work) => hold(work, true, step);

  /** One short write transaction, begun only once the lock is free; then the pause. */
  const hold = <T>(work: () => T, renew = true, at = 'lease'): T => {
    for (let pause = 1; ; pause = Math.min(pause * 2, 16)) {
      const started = now();
      try {
        const result = db.transaction(() => {
          if (renew) renewLease();
          return work();
        }).immediate();
        const took = now() - started;
        report.transactions++;
        if (took > report.longestHoldMs) [report.longestHoldMs, report.longestHoldIn] = [took, at];
        // As long again for the others: the scrub has the lock at most about half of the time.
        const pauseFrom = now();
        options.afterCommit?.();
        options.sleep(Math.max(MIN_PAUSE_MS, took - (now() - pauseFrom)));
        return result;
      } catch (err) {
        if (!isBusy(err)) throw err;
        options.sleep(pause);
      }
    }
  };

  const renewLease = () =>
    db.prepare('INSERT INTO _scrub_lease (id, holder, until_ms) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms').run(options.holder, now() + LEASE_MS);

  claimLease(db, options, (work) => hold(work, false), renewLease, now);
  try {
    finishInterrupted(db, held, holdMs, now);
    const due = db.prepare('SELECT tbl, marks FROM _scrub_due ORDER BY tbl').all() as { tbl: string; marks: number }[];
    for (const { tbl, marks } of due) {
      if (tableExists(db, tbl)) {
        rebuild(db, tbl, held, holdMs, now);
        report.tables.push(tbl);
      }
      held('done', () => db.prepare('DELETE FROM _scrub_due WHERE tbl = ? AND marks = ?').run(tbl, marks));
    }
    if (report.tables.length) giveBackFreePages(db, held, holdMs, now);
  } finally {
    hold(() => db.prepare('DELETE FROM _scrub_lease WHERE id = 1 AND holder = ?').run(options.holder), false);
  }
  // Last, so that no write of the scrub's own is left in it.
  emptyWriteAheadLogBlocking(db);
  return report;
}

/**
 * A rebuild leaves the old table's pages free (zeroed): a file made with `auto_vacuum =
 * INCREMENTAL` (every store made since the scrub exists, `useIncrementalVacuum`) moves its last
 * pages into them and shrinks, a chunk of pages per transaction, so it does not keep twice its
 * size. An older file keeps its free pages for its next rows.
 */
function giveBackFreePages(db: Database.Database, hold: Hold, holdMs: number, now: () => number): void {
  if ((db.pragma('auto_vacuum', { simple: true }) as number) !== 2) return;
  const freePages = () => db.pragma('freelist_count', { simple: true }) as number;
  while (freePages() > 0) {
    hold('give back', () =>
      withinBudget(holdMs, now, () => {
        db.exec(`PRAGMA incremental_vacuum(${STEP_ROWS})`);
        return freePages() > 0;
      }),
    );
  }
}

/** Makes a new (empty) file one whose free pages a scrub can give back (giveBackFreePages); no effect on a file that has tables. */
export function useIncrementalVacuum(db: Database.Database): void {
  db.pragma('auto_vacuum = INCREMENTAL');
}

/** True when a scrub that died left work behind (its copy keeps triggers on a live table): the next scrub finishes it. */
export function scrubInterrupted(db: Database.Database): boolean {
  return !!db.prepare(`SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'trigger') AND (name LIKE '${NEW_PREFIX}%' OR name LIKE '${OLD_PREFIX}%' OR name LIKE '${TRIGGER_PREFIX}%')`).get();
}

function claimLease(db: Database.Database, options: ScrubOptions, hold: (work: () => boolean) => boolean, take: () => void, now: () => number): void {
  // Another process's scrub runs: ours waits for it (or for its lease to run out, if it died),
  // then does what is still due.
  const free = () => {
    const lease = db.prepare('SELECT holder, until_ms FROM _scrub_lease WHERE id = 1').get() as { holder: string; until_ms: number } | undefined;
    return !lease || lease.holder === options.holder || lease.until_ms < now();
  };
  for (;;) {
    if (free() && hold(() => free() && (take(), true))) return;
    options.sleep(200);
  }
}

const tableExists = (db: Database.Database, name: string) => !!db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name);

function shapeOf(db: Database.Database, table: string): Shape {
  const info = db.prepare(`SELECT name, type, pk, hidden FROM pragma_table_xinfo(?)`).all(table) as { name: string; type: string; pk: number; hidden: number }[];
  const columns = info.filter((c) => c.hidden === 0).map((c) => c.name);
  const sql = (db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql;
  const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  const withoutRowid = /\)\s*WITHOUT\s+ROWID\s*$/i.test(sql);
  const alias = pk.length === 1 && pk[0]!.type.toUpperCase() === 'INTEGER' ? pk[0]!.name : null;
  const key = withoutRowid ? pk.map((c) => c.name) : [alias ?? 'rowid'];
  const copied = !withoutRowid && !alias ? ['rowid', ...columns] : columns;
  return { columns, key, copied, autoincrement: /\bAUTOINCREMENT\b/i.test(sql) };
}

/**
 * The key `n` rows after `after` (a key; null: from the start), or the last key up to `end` when
 * fewer are left; null when none is left.
 */
function nextKey(db: Database.Database, table: string, key: string[], after: unknown[] | null, end: unknown[], n: number): unknown[] | null {
  const cols = key.map(q).join(', ');
  const marks = key.map(() => '?').join(', ');
  const where = `WHERE ${after ? `(${cols}) > (${marks}) AND ` : ''}(${cols}) <= (${marks})`;
  const params = [...(after ?? []), ...end];
  const row = db.prepare(`SELECT ${cols} FROM ${q(table)} ${where} ORDER BY ${cols} LIMIT 1 OFFSET ?`).raw().get(...params, n - 1) as unknown[] | undefined;
  if (row) return row;
  const last = db.prepare(`SELECT ${cols} FROM ${q(table)} ${where} ORDER BY ${key.map((k) => `${q(k)} DESC`).join(', ')} LIMIT 1`).raw().get(...params) as unknown[] | undefined;
  return last ?? null;
}

/**
 * Work inside one transaction, in steps of a few rows, until `holdMs` is spent or nothing is left:
 * the clock is read after every step, so a step that turns slow (a cold page, an index that
 * outgrew the cache) costs at most itself, never a chunk sized by the steps before it. Answers
 * whether anything is left.
 */
function withinBudget(holdMs: number, now: () => number, step: () => boolean): boolean {
  const started = now();
  for (;;) {
    if (!step()) return false;
    if (now() - started >= holdMs) return true;
  }
}

/** Rows per step of withinBudget: small enough that one step is well under a millisecond. */
const STEP_ROWS = 64;

function indexesOf(db: Database.Database, table: string): { name: string; sql: string }[] {
  return db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(table) as { name: string; sql: string }[];
}

function rebuild(db: Database.Database, table: string, hold: Hold, holdMs: number, now: () => number): void {
  const shape = shapeOf(db, table);
  const copy = NEW_PREFIX + table;
  const old = OLD_PREFIX + table;
  const cols = shape.copied.map(q).join(', ');
  const keyMatch = (row: 'OLD' | 'NEW') => shape.key.map((k) => `${q(k)} = ${row}.${q(k)}`).join(' AND ');
  const values = shape.copied.map((c) => `NEW.${q(c)}`).join(', ');

  // The copy goes up to the last row there when the triggers came: rows written after reach the
  // copy by them, so a table written to all the time still has an end.
  const end = hold('start', () => {
    const tableSql = (db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql;
    db.exec(renamedTableSql(tableSql, copy));
    for (const index of indexesOf(db, table)) db.exec(renamedIndexSql(index.sql, index.name, copy));
    // Writes to the table from now on reach the copy: rows not yet copied are copied early
    // (the chunk copy then writes them again, the same), rows copied are kept equal.
    db.exec(`CREATE TRIGGER ${q(`${TRIGGER_PREFIX}i_${table}`)} AFTER INSERT ON ${q(table)} BEGIN INSERT OR REPLACE INTO ${q(copy)} (${cols}) VALUES (${values}); END`);
    db.exec(
      `CREATE TRIGGER ${q(`${TRIGGER_PREFIX}u_${table}`)} AFTER UPDATE ON ${q(table)} BEGIN DELETE FROM ${q(copy)} WHERE ${keyMatch('OLD')}; INSERT OR REPLACE INTO ${q(copy)} (${cols}) VALUES (${values}); END`,
    );
    db.exec(`CREATE TRIGGER ${q(`${TRIGGER_PREFIX}d_${table}`)} AFTER DELETE ON ${q(table)} BEGIN DELETE FROM ${q(copy)} WHERE ${keyMatch('OLD')}; END`);
    const keys = shape.key.map(q).join(', ');
    return db.prepare(`SELECT ${keys} FROM ${q(table)} ORDER BY ${shape.key.map((k) => `${q(k)} DESC`).join(', ')} LIMIT 1`).raw().get() as unknown[] | undefined;
  });

  const keyCols = shape.key.map(q).join(', ');
  const placeholders = shape.key.map(() => '?').join(', ');
  const copyUpTo = db.prepare(`INSERT OR REPLACE INTO ${q(copy)} (${cols}) SELECT ${cols} FROM ${q(table)} WHERE (${keyCols}) > (${placeholders}) AND (${keyCols}) <= (${placeholders})`);
  const copyFirst = db.prepare(`INSERT OR REPLACE INTO ${q(copy)} (${cols}) SELECT ${cols} FROM ${q(table)} WHERE (${keyCols}) <= (${placeholders})`);
  let after: unknown[] | null = null;
  const copyStep = () => {
    const upTo = nextKey(db, table, shape.key, after, end!, STEP_ROWS);
    if (!upTo) return false;
    if (after) copyUpTo.run(...after, ...upTo);
    else copyFirst.run(...upTo);
    after = upTo;
    return true;
  };
  for (let more = !!end; more; ) more = hold('copy', () => withinBudget(holdMs, now, copyStep));

  hold('swap', () => {
    for (const kind of ['i', 'u', 'd']) db.exec(`DROP TRIGGER IF EXISTS ${q(`${TRIGGER_PREFIX}${kind}_${table}`)}`);
    if (shape.autoincrement) {
      // The copy's sequence must not fall below the table's: AUTOINCREMENT never gives an id
      // again, even one whose row is gone.
      const seq = (db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').get(table) as { seq: number } | undefined)?.seq;
      if (seq !== undefined) {
        db.prepare('DELETE FROM sqlite_sequence WHERE name = ?').run(copy);
        db.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(copy, seq);
      }
    }
    db.exec(`ALTER TABLE ${q(table)} RENAME TO ${q(old)}`);
    db.exec(`ALTER TABLE ${q(copy)} RENAME TO ${q(table)}`);
  });
  dropInChunks(db, old, hold, holdMs, now);
}

/** Empties a table a chunk at a time (each deleted row and freed page zeroed), then drops it. */
function dropInChunks(db: Database.Database, table: string, hold: Hold, holdMs: number, now: () => number): void {
  const shape = shapeOf(db, table);
  const keyCols = shape.key.map(q).join(', ');
  const deleteSome = db.prepare(`DELETE FROM ${q(table)} WHERE (${keyCols}) IN (SELECT ${keyCols} FROM ${q(table)} ORDER BY ${keyCols} LIMIT ${STEP_ROWS})`);
  for (let more = true; more; ) more = hold('empty', () => withinBudget(holdMs, now, () => deleteSome.run().changes > 0));
  hold('drop', () => db.exec(`DROP TABLE ${q(table)}`));
}

/** What a scrub that died left: copies half made are dropped (their tables are still marked), old tables emptied. */
function finishInterrupted(db: Database.Database, hold: Hold, holdMs: number, now: () => number): void {
  const triggers = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '${TRIGGER_PREFIX}%'`).pluck().all() as string[];
  if (triggers.length) hold('leftovers', () => triggers.forEach((t) => db.exec(`DROP TRIGGER IF EXISTS ${q(t)}`)));
  const leftovers = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND (name LIKE '${NEW_PREFIX}%' OR name LIKE '${OLD_PREFIX}%')`).pluck().all() as string[];
  for (const table of leftovers) dropInChunks(db, table, hold, holdMs, now);
}

/** The table's CREATE statement (as sqlite_schema keeps it) for the copy's name. */
function renamedTableSql(sql: string, name: string): string {
  const m = /^CREATE\s+TABLE\s+("(?:[^"]|"")*"|[A-Za-z_][\w$]*)\s*\(/i.exec(sql);
  if (!m) throw new Error('a table of a shape the scrub does not know');
  return `CREATE TABLE ${q(name)} (${sql.slice(m[0].length)}`;
}

/** The index's CREATE statement under its twin name, on the copy. */
function renamedIndexSql(sql: string, name: string, table: string): string {
  const m = /^CREATE\s+(UNIQUE\s+)?INDEX\s+("(?:[^"]|"")*"|[A-Za-z_][\w$]*)\s+ON\s+("(?:[^"]|"")*"|[A-Za-z_][\w$]*)\s*\(/i.exec(sql);
  if (!m) throw new Error('an index of a shape the scrub does not know');
  return `CREATE ${m[1] ? 'UNIQUE ' : ''}INDEX ${q(twinIndexName(name))} ON ${q(table)} (${sql.slice(m[0].length)}`;
}
