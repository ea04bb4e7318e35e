import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { emptyWriteAheadLog, eraseOnDelete } from '../../src/shared/sqlitePurge.js';
import { SqliteRewrite } from '../../src/shared/sqliteRewrite.js';
import { tempDir } from '../support/tmp.js';

/** Deterministic pseudo-random numbers (the same file every run). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * A file like the read models after two users' data: rows interleaved, half of them grown by
 * an update (as merged-view flags and re-sent records do), then one user's rows deleted with
 * `secure_delete` on and the log emptied. Answers the file and the deleted user's markers.
 */
function fileAfterDeletion(): { path: string; db: Database.Database; gone: string[] } {
  const path = join(tempDir('wellstream-rewrite-'), 'rows.sqlite');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  eraseOnDelete(db);
  db.exec('CREATE TABLE rows (_id TEXT PRIMARY KEY, user TEXT NOT NULL, doc TEXT NOT NULL)');
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
  const grow = db.prepare("UPDATE rows SET doc = doc || ? WHERE rowid = ?");
  for (let rowid = 1; rowid <= 10_000; rowid++) if (random() < 0.5) grow.run(' '.repeat(1 + Math.floor(random() * 200)), rowid);
  db.prepare("DELETE FROM rows WHERE user = 'GONE'").run();
  return { path, db, gone };
}

const leftIn = (path: string, markers: string[]) => {
  const bytes = readFileSync(path);
  return markers.filter((m) => bytes.includes(m));
};

describe('a rewrite leaves no byte of deleted rows in the file (issue 27: erasure; docs/erasure.md, "Physical deletion")', () => {
  it('secure_delete and an emptied log leave copies that rebalancing made; after the rewrite none of them is in the file, and the live rows read back unchanged', async () => {
    const { path, db, gone } = fileAfterDeletion();
    await emptyWriteAheadLog(db);
    // The scan finds what secure_delete missed: the rewrite below has something to remove.
    expect(leftIn(path, gone).length).toBeGreaterThan(0);
    const live = db.prepare('SELECT * FROM rows ORDER BY _id').all();

    await new SqliteRewrite(path).run();
    expect(leftIn(path, gone)).toEqual([]);
    expect(() => readFileSync(`${path}-wal`)).not.toThrow();
    expect(readFileSync(`${path}-wal`).length).toBe(0);
    expect(db.prepare('SELECT * FROM rows ORDER BY _id').all()).toEqual(live);
    db.close();
  });

  it('calls made while a rewrite runs share the next one, which starts after it: a deletion committed before a call is always covered', async () => {
    const { path, db, gone } = fileAfterDeletion();
    const rewrite = new SqliteRewrite(path);
    const first = rewrite.run();
    // Committed while the first rewrite may already be past it.
    db.prepare("INSERT INTO rows (_id, user, doc) VALUES ('late', 'LATE', '{\"marker\":\"LATE-marker-1\"}')").run();
    db.prepare("UPDATE rows SET doc = doc || '                                        ' WHERE user = 'KEPT' AND rowid % 3 = 0").run();
    db.prepare("DELETE FROM rows WHERE user = 'LATE'").run();
    const second = rewrite.run();
    const third = rewrite.run();
    expect(third).toBe(second);
    await Promise.all([first, second]);
    expect(leftIn(path, [...gone, 'LATE-marker-1'])).toEqual([]);
    db.close();
  });

  it('a rewrite that cannot be done says why, and the next call tries again', async () => {
    const dir = tempDir('wellstream-rewrite-');
    const rewrite = new SqliteRewrite(join(dir, 'missing', 'rows.sqlite'));
    await expect(rewrite.run()).rejects.toThrow(/rewriting .*rows\.sqlite failed/);
    await expect(rewrite.run()).rejects.toThrow(/failed/);
  });
});
