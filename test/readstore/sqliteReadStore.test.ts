import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { projections } from '../../projections/index.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { rollupDay, SAMPLE_ROLLUPS } from '../../projections/records/sampleRollups/dayRollup.js';
import { statsFromRollups } from '../../queries/records/rollupStats.js';
import { sampleById } from '../../queries/records/sampleBlocks.js';
import { SAMPLE_KEYS, userLocators } from '../../projections/records/sampleBlocks/sampleBlock.js';
import { tempDir } from '../support/tmp.js';

/**
 * The statements `read` prepares on table `rm_<collection>` of a store with every projection's
 * collections, and how SQLite plans the first with `params` (EXPLAIN QUERY PLAN's details, joined).
 */
async function planOf(collection: string, read: (store: SqliteReadStore) => Promise<unknown>, params: (string | number)[]): Promise<{ statements: string[]; plan: string }> {
  const path = join(tempDir(), 'read.sqlite');
  const store = new SqliteReadStore({ path });
  await store.ensureCollections(projections.flatMap((p) => p.collections));
  const statements: string[] = [];
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, sql: string) {
    if (sql.includes(`rm_${collection}`)) statements.push(sql);
    return prepare.call(this, sql);
  } as typeof prepare;
  try {
    await read(store);
  } finally {
    Database.prototype.prepare = prepare;
  }
  await store.close();
  if (!statements.length) return { statements, plan: '' };
  const db = new Database(path, { readonly: true });
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${statements[0]}`).all(...params) as { detail: string }[];
  db.close();
  return { statements, plan: plan.map((p) => p.detail).join('\n') };
}

describe('embedded read store: typed columns', () => {
  it('stores index fields and declared columns as real columns; no index or table uses json_extract', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    await store.ensureCollections(projections.flatMap((p) => p.collections));
    await store.close();
    const db = new Database(path, { readonly: true });
    const schema = db.prepare("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name LIKE 'rm_%'").all() as { name: string; sql: string }[];
    db.close();
    expect(schema.length).toBeGreaterThan(20);
    for (const { sql } of schema) expect(sql).not.toMatch(/json_extract/);
    const blocks = schema.find((s) => s.name === 'rm_sample_blocks')!.sql;
    for (const f of ['user_id', 'type', 'day', 'start_min', 'start_max', 'provider', 'data']) expect(blocks).toContain(`"f_${f}"`);
    const keys = schema.find((s) => s.name === 'rm_sample_keys')!.sql;
    // The locators packed (packedLocators.ts): `provider` and the packed `data`, no row per sample.
    for (const f of ['provider', 'data']) expect(keys).toContain(`"f_${f}"`);
    // The locator's `_id` names its user (sampleBlock.ts, userTag): no user_id column.
    expect(keys).not.toContain('"f_user_id"');
  });

  it('the samples page query (the blocks of a window of days after a cursor, docs/sample-blocks-reads.md) is an index range scan', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    await store.ensureCollections(projections.flatMap((p) => p.collections));
    await store.close();
    const db = new Database(path, { readonly: true });
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT * FROM rm_sample_blocks WHERE "f_user_id" = ? AND "f_type" = ? AND "f_day" >= ? AND "f_day" <= ? AND "f_start_max" >= ? AND ("f_day", "f_start_min", _id) > (?, ?, ?) ORDER BY "f_day", "f_start_min", _id LIMIT 64`,
      )
      .all('u', 'heart_rate', '2026-01-01', '2026-02-01', '2026-01-01T00:00:00.000Z', '2026-01-01', '2026-01-01T00:00:00.000Z', 'x') as { detail: string }[];
    db.close();
    const text = plan.map((p) => p.detail).join('\n');
    expect(text).toMatch(/SEARCH rm_sample_blocks USING INDEX/);
    expect(text).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
  });

  it('joinBytes joins only a declared column (the JSON column holds no bytes): another field is refused', async () => {
    const store = new SqliteReadStore({ path: ':memory:' });
    await store.ensureCollections([{ name: 'blobs', columns: ['bytes'] }]);
    await store.applyChanges([{ op: 'put', collection: 'blobs', doc: { _id: 'a', tag: 'x', bytes: Buffer.from([0, 1]) } }]);
    await expect(store.joinBytes('blobs', { groupBy: ['tag'], field: 'other' })).rejects.toThrow(/not a declared column/);
    expect(await store.joinBytes('blobs', { groupBy: ['tag'], field: 'bytes' })).toEqual([{ group: { tag: 'x' }, bytes: Buffer.from([0, 1]) }]);
    await store.close();
  });

  it('the statistics read of a window\'s rollups is one index range scan of the window\'s days, sorted only to group them by series (issue 38)', async () => {
    const { statements, plan: text } = await planOf(
      SAMPLE_ROLLUPS,
      (store) => statsFromRollups(store, { userId: 'u', type: 'heart_rate', view: 'all' }, [{ start: Date.parse('2026-01-01T00:00:00Z'), end: Date.parse('2027-01-01T00:00:00Z') }]),
      ['u', 'heart_rate', 'all', '2026-01-01', '2026-12-31'],
    );
    expect(statements).toHaveLength(1);
    expect(text).toMatch(new RegExp(`SEARCH rm_${SAMPLE_ROLLUPS} USING INDEX rm_${SAMPLE_ROLLUPS}_ix0 \\(f_user_id=\\? AND f_type=\\? AND f_view=\\? AND f_day>\\? AND f_day<\\?\\)`));
    // The window's rows go through one sorter to be grouped by series (ReadStore.joinBytes); the
    // groups then come in order, so nothing sorts them again.
    expect(text.match(/TEMP B-TREE/g)).toEqual(['TEMP B-TREE']);
    expect(text).toMatch(/USE TEMP B-TREE FOR GROUP BY/);
  });

  it('a read by sample id seeks the id rows of its storing event by `_id`, not by scanning the user\'s locators (docs/sample-blocks.md)', async () => {
    // The user's id rows of sequence 1 (id 10,001 = 1 × 10,000 + 1, recordIds.ts): packedLocators.ts.
    const from = `${(userLocators('u')._id as { $gte: string }).$gte}i${'1'.padStart(12, '0')}`;
    const { statements, plan } = await planOf(SAMPLE_KEYS, async (store) => expect(await sampleById(store, 'u', 10_001)).toBeNull(), [from, `${from}~`]);
    expect(statements).toHaveLength(1);
    expect(plan).toMatch(new RegExp(`SEARCH rm_${SAMPLE_KEYS} USING INDEX sqlite_autoindex_rm_${SAMPLE_KEYS}_1 \\(_id>\\? AND _id<\\?\\)`));
  });

  it('a collection whose declared shape changed is recreated empty and reported, so its projection rebuilds', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    expect(await store.ensureCollections([{ name: 'things', indexes: [{ fields: [['a', 1]] }] }])).toEqual([]);
    await store.applyChanges([{ op: 'put', collection: 'things', doc: { _id: '1', a: 1, b: 2 } }]);
    expect(await store.ensureCollections([{ name: 'things', indexes: [{ fields: [['a', 1]] }] }])).toEqual([]);
    expect(await store.count('things')).toBe(1);
    expect(await store.ensureCollections([{ name: 'things', indexes: [{ fields: [['a', 1]] }], columns: ['b'] }])).toEqual(['things']);
    expect(await store.count('things')).toBe(0);
    await store.close();
  });

  it('a row put after its collection was recreated in another shape fills the new shape\'s columns: the whole-row upsert is written per shape, not per collection name (issue 37)', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    await store.ensureCollections([{ name: 'things', indexes: [{ fields: [['a', 1]] }] }]);
    await store.applyChanges([{ op: 'put', collection: 'things', doc: { _id: '1', a: 1, b: 2 } }]);
    await store.ensureCollections([{ name: 'things', indexes: [{ fields: [['a', 1]] }], columns: ['b', 'c'] }]);
    await store.applyChanges([{ op: 'put', collection: 'things', doc: { _id: '1', a: 1, b: 2, c: 'x', d: true } }]);
    // Put again with fewer fields: the row is replaced whole, columns included.
    await store.applyChanges([{ op: 'put', collection: 'things', doc: { _id: '1', a: 3, d: false } }]);
    expect(await store.get('things', '1')).toEqual({ _id: '1', a: 3, d: false });
    expect(await store.find('things', { filter: { b: null } })).toHaveLength(1);
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT "f_a", "f_b", "f_c" FROM rm_things').all()).toEqual([{ f_a: 3, f_b: null, f_c: null }]);
    db.close();
  });

  it('a statistics rollup row reads back as put: its packed quarters a BLOB that reads back as a Buffer, its day count a column, the rest in doc (issue 38)', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    await store.ensureCollections(projections.flatMap((p) => p.collections));
    const sample = { startMs: Date.parse('2026-01-01T10:07:00Z'), value: 61, provider: 'p', source: 's', unit: 'bpm', ingested_at: '2026-01-01T10:10:00Z', hidden: false, excluded: false };
    const [doc] = rollupDay({ user_id: 'u', tenant_id: 't', type: 'heart_rate', day: '2026-01-01' }, [sample]);
    await store.applyChanges([{ op: 'put', collection: SAMPLE_ROLLUPS, doc: { ...doc!, note: { kept: true } } }]);
    const back = await store.get(SAMPLE_ROLLUPS, doc!._id);
    expect(back).toEqual({ ...doc, note: { kept: true } });
    expect(Buffer.isBuffer(back!.quarters)).toBe(true);
    expect((await store.find(SAMPLE_ROLLUPS, { fields: ['quarters'] }))[0]!.quarters).toEqual(doc!.quarters);
    await store.close();
    const db = new Database(path, { readonly: true });
    const row = db.prepare(`SELECT "f_count", typeof("f_quarters") AS kind, "f_quarters", doc FROM rm_${SAMPLE_ROLLUPS}`).get() as Record<string, unknown>;
    db.close();
    expect(row).toMatchObject({ f_count: 1, kind: 'blob', f_quarters: doc!.quarters });
    expect(JSON.parse(row.doc as string)).toEqual({ tenant_id: 't', note: { kept: true } });
  });

  it('refuses bytes in a field that is not a declared column, writing nothing (the JSON column would turn them into an object)', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([{ name: 'things', indexes: [{ fields: [['a', 1]] }], columns: ['b'] }]);
    await expect(store.applyChanges([{ op: 'put', collection: 'things', doc: { _id: '1', a: 1, b: Buffer.from([1]) } }, { op: 'put', collection: 'things', doc: { _id: '2', a: 2, z: Buffer.from([1]) } }])).rejects.toThrow(/not a declared column/);
    expect(await store.count('things')).toBe(0);
    await store.close();
  });

  it('a collection declared extendInPlace keeps its documents through a version that adds columns and indexes; the new fields become columns and the new index serves queries (issue 20: webhook deliveries gain user_id)', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    const v1 = { name: 'log', indexes: [{ fields: [['a', 1]] as const }], columns: ['c'], extendInPlace: true };
    await store.ensureCollections([v1]);
    await store.applyChanges([
      { op: 'put', collection: 'log', doc: { _id: '1', a: 1, b: 'x', c: 'k', n: null } },
      { op: 'put', collection: 'log', doc: { _id: '2', a: 2, b: { nested: true }, c: 'k' } },
      { op: 'put', collection: 'log', doc: { _id: '3', a: 3, c: 'k' } },
    ]);
    const v2 = { ...v1, indexes: [...v1.indexes, { fields: [['b', 1]] as const }], columns: ['c', 'n'] };
    expect(await store.ensureCollections([v2])).toEqual([]);
    expect(await store.find('log', { sort: [['_id', 1]] })).toEqual([
      { _id: '1', a: 1, b: 'x', c: 'k', n: null },
      { _id: '2', a: 2, b: { nested: true }, c: 'k' },
      { _id: '3', a: 3, c: 'k' },
    ]);
    expect((await store.find('log', { filter: { b: 'x' } })).map((d) => d._id)).toEqual(['1']);
    expect((await store.find('log', { filter: { b: { $exists: false } } })).map((d) => d._id)).toEqual(['3']);
    // Declared again the same: nothing to do; the new field is a real column with its index.
    expect(await store.ensureCollections([v2])).toEqual([]);
    await store.close();
    const db = new Database(path, { readonly: true });
    const plan = db.prepare('EXPLAIN QUERY PLAN SELECT _id FROM rm_log WHERE "f_b" = ?').all('x') as { detail: string }[];
    const row = db.prepare('SELECT "f_b" AS b, doc FROM rm_log WHERE _id = ?').get('1') as { b: string; doc: string };
    db.close();
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING (COVERING )?INDEX rm_log_ix1/);
    expect(row).toEqual({ b: 'x', doc: JSON.stringify({ n: null }) });

    // Anything else (a column dropped) still recreates it.
    const again = new SqliteReadStore({ path });
    expect(await again.ensureCollections([{ ...v2, columns: ['n'] }])).toEqual(['log']);
    expect(await again.count('log')).toBe(0);
    await again.close();
  });

  it('a bulk load creates a collection without its secondary indexes and builds them when declared again (projection rebuilds)', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    const spec = { name: 'bulk', indexes: [{ fields: [['a', 1]] as const }] };
    await store.ensureCollections([spec], { indexes: false });
    await store.applyChanges([{ op: 'put', collection: 'bulk', doc: { _id: '1', a: 1 } }]);
    const indexes = () => {
      const db = new Database(path, { readonly: true });
      const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_bulk' AND sql IS NOT NULL").all() as { name: string }[]).map((r) => r.name);
      db.close();
      return names;
    };
    expect(indexes()).toEqual([]);
    expect(await store.ensureCollections([spec])).toEqual([]);
    expect(indexes()).toEqual(['rm_bulk_ix0']);
    expect(await store.find('bulk', { filter: { a: 1 } })).toEqual([{ _id: '1', a: 1 }]);
    await store.close();
  });
});
