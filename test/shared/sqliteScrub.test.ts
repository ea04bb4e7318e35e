import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { emptyWriteAheadLog, eraseOnDelete } from '../../src/shared/sqlitePurge.js';
import { SqliteScrub } from '../../src/shared/sqliteScrub.js';
import { ensureIndex, markForScrub, SCRUB_DDL, scrubInterrupted, scrubPass, useIncrementalVacuum } from '../../src/shared/sqliteScrubPass.js';
import { tempDir } from '../support/tmp.js';

/** Deterministic pseudo-random numbers (the same file every run). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

function open(path: string, incremental = false): Database.Database {
  const db = new Database(path);
  if (incremental) useIncrementalVacuum(db);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  eraseOnDelete(db);
  db.exec(SCRUB_DDL);
  return db;
}

/**
 * A file like the read models after two users' data: rows interleaved, half of them grown by
 * an update (as merged-view flags and re-sent records do), then one user's rows deleted with
 * `secure_delete` on, as an erasure does (its table marked for the scrub). Answers the file and
 * the deleted user's markers.
 */
function fileAfterDeletion(incremental = false): { path: string; db: Database.Database; gone: string[] } {
  const path = join(tempDir('wellstream-scrub-'), 'rows.sqlite');
  const db = open(path, incremental);
  db.exec('CREATE TABLE rows (_id TEXT PRIMARY KEY, user TEXT NOT NULL, doc TEXT NOT NULL)');
  ensureIndex(db, 'CREATE INDEX IF NOT EXISTS rows_ix0 ON rows (user ASC, doc ASC)');
  const random = lcg(27);
  const gone: string[] = [];
  const insert = db.prepare('INSERT INTO rows (_id, user, doc) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < 10_000; i++) {
      const user = i % 2 ? 'GONE' : 'KEPT';
      const marker = `${user}-${i}-${Math.floor(random() * 1e12).toString(36)}`;
      if (user === 'GONE') gone.push(marker);
      insert.run(`k${Math.floor(random() * 1e15).toString(36)}-${i}`, user, JSON.stringify({ marker }));
    }
  })();
  const grow = db.prepare('UPDATE rows SET doc = doc || ? WHERE rowid = ?');
  for (let rowid = 1; rowid <= 10_000; rowid++) if (random() < 0.5) grow.run(' '.repeat(1 + Math.floor(random() * 200)), rowid);
  db.transaction(() => {
    if (db.prepare("DELETE FROM rows WHERE user = 'GONE'").run().changes > 0) markForScrub(db, 'rows');
  })();
  return { path, db, gone };
}

/** The markers found in the file's bytes (one pass over the file, whatever the number of markers). */
const leftIn = (path: string, markers: string[]) => {
  const found = new Set(readFileSync(path).toString('latin1').match(/[A-Z]+-(?:\d+|marker)-[0-9a-z]+/g) ?? []);
  return markers.filter((m) => found.has(m));
};

const indexNames = (db: Database.Database) => db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'rows' AND sql IS NOT NULL").pluck().all();

describe('a scrub leaves no byte of an erasure’s deleted rows in the file (contracts §19; docs/erasure.md, "Physical deletion")', () => {
  it('secure_delete and an emptied log leave copies that rebalancing made; after the scrub none of them is in the file, and the live rows read back unchanged', async () => {
    const { path, db, gone } = fileAfterDeletion();
    await emptyWriteAheadLog(db);
    // The scan finds what secure_delete missed: the scrub below has something to remove.
    expect(leftIn(path, gone).length).toBeGreaterThan(0);
    const live = db.prepare('SELECT * FROM rows ORDER BY _id').all();

    const report = await new SqliteScrub(path, db).run();
    expect(report.tables).toEqual(['rows']);
    expect(leftIn(path, gone)).toEqual([]);
    expect(readFileSync(`${path}-wal`).length).toBe(0);
    expect(db.prepare('SELECT * FROM rows ORDER BY _id').all()).toEqual(live);
    expect(db.prepare('SELECT rowid FROM rows ORDER BY rowid').pluck().all()).toEqual(
      db.prepare("SELECT rowid FROM rows ORDER BY rowid").pluck().all(),
    );
    // The rebuilt table's index is its twin; creating the index again finds it and builds nothing.
    expect(indexNames(db)).toEqual(['rows_ix0__s']);
    ensureIndex(db, 'CREATE INDEX IF NOT EXISTS rows_ix0 ON rows (user ASC, doc ASC)');
    expect(indexNames(db)).toEqual(['rows_ix0__s']);
    expect(scrubInterrupted(db)).toBe(false);
    db.close();
  });

  it('a file made for it gives back the rebuilt table’s old pages: it ends no larger than before the scrub, with no free page', async () => {
    const { path, db, gone } = fileAfterDeletion(true);
    const pages = db.pragma('page_count', { simple: true }) as number;
    await new SqliteScrub(path, db).run();
    expect(leftIn(path, gone)).toEqual([]);
    expect(db.pragma('freelist_count', { simple: true })).toBe(0);
    expect(db.pragma('page_count', { simple: true }) as number).toBeLessThanOrEqual(pages);
    db.close();
  });

  it('an erasure that deleted nothing rewrites nothing: with no table marked, the scrub rebuilds no table', async () => {
    const { path, db } = fileAfterDeletion();
    await new SqliteScrub(path, db).run();
    const report = await new SqliteScrub(path, db).run();
    expect(report).toMatchObject({ tables: [] });
    expect(indexNames(db)).toEqual(['rows_ix0__s']);
    db.close();
  });

  it('calls made while a scrub runs share the next one, which starts after it: a deletion committed before a call is always covered', async () => {
    const { path, db, gone } = fileAfterDeletion();
    const scrub = new SqliteScrub(path, db);
    const first = scrub.run();
    // Committed while the first scrub may already be past it.
    db.prepare("INSERT INTO rows (_id, user, doc) VALUES ('late', 'LATE', '{\"marker\":\"LATE-marker-1\"}')").run();
    db.prepare("UPDATE rows SET doc = doc || '                                        ' WHERE user = 'KEPT' AND rowid % 3 = 0").run();
    db.transaction(() => {
      db.prepare("DELETE FROM rows WHERE user = 'LATE'").run();
      markForScrub(db, 'rows');
    })();
    const second = scrub.run();
    const third = scrub.run();
    expect(third).toBe(second);
    await Promise.all([first, second]);
    expect(leftIn(path, [...gone, 'LATE-marker-1'])).toEqual([]);
    db.close();
  });

  it('never holds the write lock across its chunks: between any two of its transactions another connection writes without waiting (contracts §19, "Erasure never stalls the others")', () => {
    const { path, db } = fileAfterDeletion();
    const other = new Database(path);
    other.pragma('busy_timeout = 0');
    let writes = 0;
    const report = scrubPass(db, {
      holder: 'test',
      holdMs: 1,
      // Each pause of the scrub: a neighbour's write, refused at once if the lock were still held.
      sleep: () => {
        other.prepare("INSERT INTO rows (_id, user, doc) VALUES (?, 'NEIGHBOUR', '{}')").run(`n${writes++}`);
      },
    });
    expect(report.tables).toEqual(['rows']);
    // Many small transactions, not one: the copy and the emptying went a chunk at a time.
    expect(report.transactions).toBeGreaterThan(10);
    expect(writes).toBeGreaterThanOrEqual(report.transactions);
    // Every neighbour write made during the copy reached the rebuilt table.
    expect(db.prepare("SELECT count(*) FROM rows WHERE user = 'NEIGHBOUR'").pluck().get()).toBe(writes);
    other.close();
    db.close();
  });

  it('writes of every kind during a scrub reach the rebuilt table, and an AUTOINCREMENT sequence never goes back (the event log’s positions)', () => {
    const path = join(tempDir('wellstream-scrub-'), 'log.sqlite');
    const db = open(path);
    db.exec('CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL, data TEXT NOT NULL, UNIQUE (stream, id))');
    const insert = db.prepare('INSERT INTO events (id, stream, data) VALUES (?, ?, ?)');
    for (let i = 0; i < 3_000; i++) insert.run(`e${i}`, `s${i % 7}`, 'x'.repeat(i % 300));
    // The newest rows deleted: their positions must never be given again.
    db.prepare('DELETE FROM events WHERE position > 2990').run();
    db.transaction(() => {
      db.prepare("DELETE FROM events WHERE stream = 's3'").run();
      markForScrub(db, 'events');
    })();
    const other = new Database(path);
    const random = lcg(5);
    let n = 0;
    scrubPass(db, {
      holder: 'test',
      holdMs: 1,
      sleep: () => {
        const r = random();
        if (r < 0.4) other.prepare('INSERT INTO events (id, stream, data) VALUES (?, ?, ?)').run(`new${n++}`, 's9', 'y'.repeat(n % 50));
        else if (r < 0.6) other.prepare('UPDATE events SET data = data || ? WHERE position = ?').run('z', 1 + Math.floor(random() * 2_990));
        else if (r < 0.7) other.prepare('DELETE FROM events WHERE position = ?').run(1 + Math.floor(random() * 2_990));
        else if (r < 0.8) other.prepare('INSERT OR REPLACE INTO events (position, id, stream, data) VALUES (?, ?, ?, ?)').run(1 + Math.floor(random() * 2_990), `r${n++}`, 's8', 'replaced');
      },
    });
    const expected = other.prepare('SELECT * FROM events ORDER BY position').all();
    expect(db.prepare('SELECT * FROM events ORDER BY position').all()).toEqual(expected);
    expect(db.prepare('SELECT count(*) FROM events WHERE id IN (SELECT id FROM events GROUP BY id HAVING count(*) > 1)').pluck().get()).toBe(0);
    const next = db.prepare('INSERT INTO events (id, stream, data) VALUES (?, ?, ?)').run('after', 's1', '').lastInsertRowid as number;
    expect(next).toBeGreaterThan(Math.max(2_990, ...expected.map((e) => (e as { position: number }).position)));
    other.close();
    db.close();
  });

  it('a scrub that died half way is finished by the next: its copy and triggers go, the data stays whole, the table is scrubbed again', () => {
    const { path, db, gone } = fileAfterDeletion();
    const live = db.prepare('SELECT * FROM rows ORDER BY _id').all();
    let pauses = 0;
    expect(() =>
      scrubPass(db, {
        holder: 'first',
        holdMs: 1,
        sleep: () => {
          if (++pauses === 8) throw new Error('the process died');
        },
      }),
    ).toThrow(/died/);
    expect(scrubInterrupted(db)).toBe(true);
    // The dead scrub's lease is released by its `finally`; a process that really died leaves it to run out.
    const report = scrubPass(db, { holder: 'second', sleep: () => {} });
    expect(report.tables).toEqual(['rows']);
    expect(scrubInterrupted(db)).toBe(false);
    expect(db.prepare('SELECT * FROM rows ORDER BY _id').all()).toEqual(live);
    expect(leftIn(path, gone)).toEqual([]);
    db.close();
  });

  it('close stops a running scrub and waits for its thread: afterwards nothing in the process holds the file, and no scrub starts (a closed store leaves no writer behind)', async () => {
    if (!existsSync('/proc/self/fd')) return console.log('skipped: no /proc/self/fd to see which files the process holds');
    const { path, db } = fileAfterDeletion();
    const held = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path);
        } catch {
          return false;
        }
      }).length;
    const own = held();
    const scrub = new SqliteScrub(path, db);
    const running = scrub.run();
    // The scrub's thread has opened the file (its own connection) before close is called.
    for (let i = 0; i < 500 && held() === own; i++) await new Promise((r) => setTimeout(r, 2));
    expect(held()).toBeGreaterThan(own);
    await scrub.close();
    db.close();
    expect(held()).toBe(0);
    await running.catch(() => undefined);
    await expect(scrub.run()).rejects.toThrow(/closed/);
  });

  it('a scrub that cannot be done says why, and the next call tries again', async () => {
    const dir = tempDir('wellstream-scrub-');
    const db = open(join(dir, 'rows.sqlite'));
    markForScrub(db, 'rows');
    // The store's connection says a scrub is due; the scrub's thread cannot open the file.
    const scrub = new SqliteScrub(join(dir, 'missing', 'rows.sqlite'), db);
    await expect(scrub.run()).rejects.toThrow(/scrubbing .*rows\.sqlite failed/);
    await expect(scrub.run()).rejects.toThrow(/failed/);
  });
});
