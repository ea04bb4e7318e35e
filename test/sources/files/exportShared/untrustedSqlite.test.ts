import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { distrustAndCheck, openUntrustedDatabase } from '../../../../src/sources/files/exportShared/untrustedSqlite.js';
import { buildGadgetbridgeExport } from '../../../fixtures/device-c/buildGadgetbridgeExport.js';
import { buildHealthConnectDatabase } from '../../../fixtures/health-connect/buildHealthConnectExport.js';
import { amend, withCheckBomb, withGeneratedColumnBomb } from '../../../fixtures/sqlite/sqliteBombs.js';
import { realdataPath } from '../realdata.js';

/**
 * contracts §18, issue 34 §1: a stranger's SQLite file is refused, from its schema alone, when
 * the schema would make SQLite run the sender's SQL (CHECK constraints, generated columns beyond
 * arithmetic over stored columns, triggers, views, expression and partial indexes), before
 * `PRAGMA quick_check` evaluates any of it; and the real apps' databases still pass.
 */

const dir = mkdtempSync(join(tmpdir(), 'untrusted-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** The refusal openUntrustedDatabase throws for `file` (as the Health Connect decoder opens it), or null when it opens. */
function refusalOf(file: Buffer): string | null {
  const path = join(dir, `db-${n++}.db`);
  writeFileSync(path, file);
  try {
    openUntrustedDatabase(path, 'upload.db').close();
    return null;
  } catch (err) {
    if (err instanceof UnreadableExportError) return err.message;
    throw err;
  }
}
const plain = (sql: string) => amend(null, (db) => db.exec(sql));

describe('a stranger\'s SQLite schema is judged before its integrity check (contracts §18, issue 34 §1)', { timeout: 60_000 }, () => {
  it('contracts §18: refuses a table with a CHECK constraint over built-in functions, unchecked (the check would evaluate it on every row)', () => {
    const reason = refusalOf(withCheckBomb(buildHealthConnectDatabase()));
    expect(reason).toMatch(/^upload\.db is refused before its integrity check: its schema declares CHECK constraints in tables \(bomb_check\)/);
  });

  it('contracts §18: refuses a VIRTUAL NOT NULL generated column computed by functions, which ignore_check_constraints does not cover and table_info does not show', () => {
    const reason = refusalOf(withGeneratedColumnBomb(buildHealthConnectDatabase()));
    expect(reason).toMatch(/generated columns computed by more than arithmetic over stored columns \(bomb_generated\.x\)/);
  });

  it('contracts §18: refuses triggers, views, expression indexes and partial indexes, naming each', () => {
    const reason = refusalOf(
      plain(`CREATE TABLE t (a INTEGER, b TEXT);
        CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END;
        CREATE VIEW v AS SELECT a FROM t;
        CREATE INDEX by_expression ON t (lower(b));
        CREATE INDEX by_part ON t (a) WHERE a > 0;`),
    );
    expect(reason).toMatch(/triggers \(tr\); views \(v\); expression or partial indexes \((by_expression, by_part|by_part, by_expression)\)/);
  });

  it('contracts §18: refuses generated columns that call a function, build a string, chain other generated columns, or are STORED with a function', () => {
    for (const column of [
      `g TEXT AS (hex(b))`,
      `g TEXT AS ("printf"('%s', b))`,
      `g TEXT AS (b || b)`,
      `g INTEGER AS (a + 1), h INTEGER AS (g * g + g * g)`,
      `g TEXT GENERATED ALWAYS AS (upper(b)) STORED`,
      `g INTEGER AS (a + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1)`,
    ]) {
      expect(refusalOf(plain(`CREATE TABLE t (a INTEGER, b TEXT, ${column})`)), column).toMatch(/generated columns computed by more than arithmetic/);
    }
  });

  it('is not fooled by the word CHECK where it is no constraint: a column named check_x or "CHECK", a default \'CHECK\', a comment', () => {
    const sql = `CREATE TABLE t (check_x INTEGER, "CHECK" TEXT DEFAULT 'CHECK(1)', [check y] INTEGER, \`Check z\` INTEGER -- CHECK(a > 0)
      /* CHECK (1) */ , b TEXT DEFAULT 'it''s CHECK')`;
    expect(refusalOf(plain(sql))).toBeNull();
    expect(refusalOf(plain(`CREATE TABLE t (a INTEGER /* no constraint */ check (a > 0))`))).toMatch(/CHECK constraints in tables \(t\)/);
  });

  it("passes Health Connect's own generated local-time columns (arithmetic over stored columns, every record table since database version 10)", () => {
    const hc = buildHealthConnectDatabase();
    const columns = new Database(hc, { readonly: true });
    const generated = (columns.prepare(`PRAGMA table_xinfo(steps_record_table)`).all() as { hidden: number }[]).filter((c) => c.hidden === 2);
    columns.close();
    expect(generated.length).toBeGreaterThan(0);
    expect(refusalOf(hc)).toBeNull();
  });

  it("passes the Gadgetbridge fixture and every real Gadgetbridge database of ../shared/realdata (plain column indexes only)", (context) => {
    expect(refusalOf(buildGadgetbridgeExport())).toBeNull();
    const folder = realdataPath('gadgetbridge');
    if (!folder) return context.skip('no ../shared/realdata/gadgetbridge');
    const files = readdirSync(folder).filter((f) => /\.(db|sqlite)$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(refusalOf(readFileSync(join(folder, f))), f).toBeNull();
  });

  it('runs the integrity check with ignore_check_constraints on, a second line should a CHECK ever pass the schema check', () => {
    const db = new Database(plain('CREATE TABLE t (a INTEGER)'));
    try {
      expect(distrustAndCheck(db)).toBeNull();
      expect(db.pragma('ignore_check_constraints', { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });
});
