import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderDoc, type RenderTemplate } from '../../src/readstore/renderedRows.js';
import { renderedPageOfDocs } from '../../src/readstore/renderedPage.js';
import { withTieBreaker, type Doc, type FindQuery, type Scalar } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { CANNOT_RENDER, compileRender, numberJsonSql } from '../../src/readstore/sqliteRender.js';
import { SqliteTable } from '../../src/readstore/sqliteTable.js';
import Database from 'better-sqlite3';
import { tempDir } from '../support/tmp.js';

const SPEC = {
  name: 'things',
  indexes: [{ fields: [['k', 1], ['n', 1]] as const }],
  columns: ['s', 'b', 'v'],
  booleans: ['b'],
};

// Every kind over a column, a boolean column and a field kept in `doc`.
const TEMPLATE: RenderTemplate = [
  { key: 'n', field: 'n', as: 'value' },
  { key: 's', field: 's', as: 'string' },
  { key: 'v', field: 'v', as: 'value', missing: '"none"' },
  { key: 'b', field: 'b', as: 'boolean' },
  { key: 'notB', field: 'b', as: 'notTrue' },
  { key: 'bAsValue', field: 'b', as: 'value' },
  { key: 'vAsBoolean', field: 'v', as: 'boolean' },
  { key: 'notV', field: 'v', as: 'notTrue' },
  { key: 'meta', field: 'meta', as: 'value', missing: '[]' },
  { key: 'flag', field: 'flag', as: 'boolean' },
  { key: 'notFlag', field: 'flag', as: 'notTrue' },
  { key: 'str', field: 'str', as: 'string' },
  { key: 'key with "quotes"', field: 's', as: 'string' },
];

const ODD_STRINGS = ['plain', 'lone \ud800 surrogate', '', 'quote " and \\ backslash', 'line\nfeed\ttab\r\b\f', '\u0000\u0001\u001f\u007f', '\u2028\u2029', 'émoji 🫀 ü', "single ' quote", '</script>'];
const ODD_VALUES: unknown[] = [0, 1, -0, 55, 0.1 + 0.2, 1e21, 1.5e-7, -123456789.125, 2 ** 53 - 1, true, false, null, 'text', '1', '', { a: [1, 'x', null, { 'k"': '\n' }] }, [], {}, [1.5, '\u2028']];
/** ODD_VALUES without the numbers SQL leaves to the document (numberJsonSql): 0.1 + 0.2 has 17 digits, 1e21 and 1.5e-7 are written with exponents. */
const WRITABLE_VALUES = ODD_VALUES.filter((v) => v !== 0.1 + 0.2 && v !== 1e21 && v !== 1.5e-7);

function docs(): Doc[] {
  const out: Doc[] = [];
  let n = 0;
  for (const v of [...ODD_VALUES, undefined]) {
    for (const b of [true, false, null, undefined, 0, 1, 7, 'yes', '']) {
      const s = ODD_STRINGS[n % ODD_STRINGS.length];
      const d: Doc = { _id: `d${n}`, k: 'k', n: n % 3 === 0 ? n + 0.5 : n, s: n % 11 === 0 ? null : n % 13 === 0 ? 42 : s };
      if (v !== undefined) d.v = v;
      if (b !== undefined) d.b = b;
      if (n % 2) d.meta = ODD_VALUES[n % ODD_VALUES.length];
      if (n % 5) d.flag = [true, false, null, 1][n % 4];
      if (n % 7) d.str = ODD_STRINGS[(n * 3) % ODD_STRINGS.length];
      out.push(d);
      n++;
    }
  }
  return out;
}

/** The embedded store's rendered page and the documents' page (renderedPageOfDocs of find with one more row) of a query. */
async function bothPages(store: SqliteReadStore, query: FindQuery & { limit: number }, template = TEMPLATE, onDocumentRead = () => {}) {
  const sort = query.sort!;
  const found = await store.find('things', { ...query, limit: query.limit + 1 });
  const docs = renderedPageOfDocs(template, found, query.limit, withTieBreaker(sort));
  const find = store.find.bind(store);
  store.find = (...args) => (onDocumentRead(), find(...args));
  try {
    return { rendered: await store.findRenderedPage('things', query, template), docs, found };
  } finally {
    store.find = find;
  }
}

describe('embedded read store: pages written as JSON in SQL (findRenderedPage, issues 27 and 38)', () => {
  it('writes every page byte for byte as renderDoc writes its documents: each kind over columns, boolean columns and doc fields; escapes, unicode, fractions, booleans and numbers where the other is declared, nulls and missing fields', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([SPEC]);
    const all = docs();
    await store.applyChanges(all.map((doc) => ({ op: 'put', collection: 'things', doc })));
    const sort = [['n', 1]] as const;
    // Pages of every size, so that rows SQL cannot write fall on some pages and not on others.
    for (const limit of [1, 3, 17, all.length, all.length + 5]) {
      let after: Scalar[] | undefined;
      let rows = 0;
      do {
        const { rendered, docs: expected } = await bothPages(store, { filter: { k: 'k' }, sort, after, limit });
        expect(rendered.json).toBe(expected.json);
        expect(rendered.count).toBe(expected.count);
        expect(rendered.next).toEqual(expected.next);
        expect(() => JSON.parse(`[${rendered.json}]`)).not.toThrow();
        rows += rendered.count;
        after = rendered.next ?? undefined;
      } while (after);
      expect(rows).toBe(all.length);
    }
    await store.close();
  });

  it('writes each field of a row as renderDoc does, or marks it CANNOT_RENDER: never other bytes (each kind over columns, boolean columns and doc fields, every odd value)', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    await store.ensureCollections([SPEC]);
    await store.applyChanges(docs().map((doc) => ({ op: 'put', collection: 'things', doc })));
    const found = await store.find('things', { sort: [['n', 1]] });
    await store.close();
    const db = new Database(path, { readonly: true });
    let written = 0;
    for (const field of TEMPLATE) {
      const rows = db.prepare(`SELECT ${compileRender(new SqliteTable(SPEC), [field])} FROM rm_things ORDER BY "f_n"`).pluck().all() as string[];
      expect(rows.length).toBe(found.length);
      rows.forEach((r, i) => {
        if (r.includes(CANNOT_RENDER)) return;
        written++;
        expect(r, `${field.key} of ${found[i]!._id}`).toBe(renderDoc([field], found[i]!));
      });
    }
    db.close();
    expect(written).toBeGreaterThan((TEMPLATE.length * found.length) / 2);
  });

  it('writes pages of rows whose values have their declared kinds in SQL alone, never from documents, each page and cursor as the documents\' (pages ending exactly at the last row too)', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([SPEC]);
    const typed: Doc[] = ODD_STRINGS.flatMap((s, i) =>
      [true, false, null].map((b, j): Doc => ({ _id: `t${i}-${j}`, k: 'k', n: i * 10 + j + 0.25, s: j === 2 ? null : s, v: WRITABLE_VALUES[(i + j) % WRITABLE_VALUES.length], b, meta: { s, n: i / 3 }, flag: j === 0, str: s })),
    );
    await store.applyChanges(typed.map((doc) => ({ op: 'put', collection: 'things', doc })));
    // `boolean` of a field that is no boolean column (vAsBoolean) is the one kind written from the document.
    const typedTemplate = TEMPLATE.filter((f) => f.key !== 'vAsBoolean');
    let fromDocs = 0;
    // 30 rows: pages of 10 and of 30 end exactly at the last row.
    expect(typed.length).toBe(30);
    for (const limit of [1, 7, 10, typed.length, typed.length + 1]) {
      let after: Scalar[] | undefined;
      const pages: string[] = [];
      do {
        const { rendered, docs: expected } = await bothPages(store, { filter: { k: 'k' }, sort: [['n', 1]], after, limit }, typedTemplate, () => fromDocs++);
        expect(rendered).toEqual(expected);
        pages.push(rendered.json);
        after = rendered.next ?? undefined;
      } while (after);
      expect(pages.length).toBe(Math.ceil(typed.length / limit));
    }
    expect(fromDocs).toBe(0);
    await store.close();
  });

  it('writes text stored from a string with a lone surrogate (bytes that are not UTF-8) as its documents read back: U+FFFD for each bad byte', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([SPEC]);
    await store.applyChanges(['plain', 'lone \ud800 surrogate', 'plain too'].map((s, n) => ({ op: 'put', collection: 'things', doc: { _id: `d${n}`, k: 'k', n, s } })));
    let fromDocs = 0;
    const { rendered, docs: expected } = await bothPages(store, { filter: { k: 'k' }, sort: [['n', 1]], limit: 10 }, [{ key: 's', field: 's', as: 'string' }], () => fromDocs++);
    expect(rendered).toEqual(expected);
    expect(rendered.json).toContain('lone \ufffd\ufffd\ufffd surrogate');
    expect(fromDocs).toBe(0);
    await store.close();
  });

  it('writes a number as JSON.stringify does wherever it writes it (integers below 2^53, fractions of up to 15 digits between 1e-4 and 1e15), and marks every other', () => {
    const db = new Database(':memory:');
    const write = db.prepare(`SELECT ${numberJsonSql('x')} FROM (SELECT ? AS x)`).pluck();
    const random = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const r = random(38);
    const values = [0, -0, 1, -1, 55, 0.1, 0.2 + 0.1, 1e-4, 9.99e-5, 1e-7, 123.456, -72.35, 1e15 - 0.5, 1e15, 1e21, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 5e-324, Number.MAX_VALUE, 123456789012345.5, 99999999999999.99];
    // Decimals of up to 7 digits, what records hold: each is written (from 1e-4 on).
    const short: number[] = [72.35, 0.5, 1234.5678, 0.0001];
    for (let i = 0; i < 20_000; i++) {
      const scale = 10 ** Math.floor(r() * 24 - 8);
      values.push(r() * scale, -r() * scale, Math.round(r() * 2 ** 60) * (r() < 0.5 ? 1 : -1));
      short.push(Math.round(r() * 1e7) / 10 ** Math.floor(r() * 8));
    }
    for (const v of [...values, ...short]) {
      const out = write.get(v) as string;
      if (out !== CANNOT_RENDER) expect(out, `value ${v}`).toBe(JSON.stringify(v));
    }
    for (const v of [...short, 0, 55, -3, 2 ** 52, -(2 ** 53 - 1)]) if (v === 0 || Math.abs(v) >= 1e-4) expect(write.get(v), `value ${v}`).toBe(JSON.stringify(v));
    // Past the range: an exponent (1e21, 1e-7), 17 digits (0.1 + 0.2), a double past 2^53.
    for (const v of [1e21, 1e-7, 0.1 + 0.2, 2 ** 53 + 2, 1e15 + 0.5]) expect(write.get(v), `value ${v}`).toBe(CANNOT_RENDER);
    db.close();
  });

  it('pages after a cursor, within a limit and in a descending order exactly as find does, the cursor included', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([SPEC]);
    await store.applyChanges(docs().map((doc) => ({ op: 'put', collection: 'things', doc })));
    const { rendered, docs: expected, found } = await bothPages(store, { filter: { k: 'k', n: { $gte: 10 } }, sort: [['n', -1]] as const, after: [100, 'd100'], limit: 25 });
    expect(found.length).toBe(26);
    expect(rendered).toEqual(expected);
    expect(rendered.next).toEqual([found[24]!.n, found[24]!._id]);
    await store.close();
  });

  it('answers an empty page for a collection never declared, or a filter that matches nothing', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([SPEC]);
    await store.applyChanges(docs().map((doc) => ({ op: 'put', collection: 'things', doc })));
    for (const [collection, filter] of [['things', { k: 'other' }], ['unknown', {}]] as const) {
      const page = await store.findRenderedPage(collection, { filter, sort: [['n', 1]], limit: 10 }, TEMPLATE);
      expect({ json: page.json.toString(), count: page.count, next: page.next }).toEqual({ json: '', count: 0, next: null });
    }
    await store.close();
  });

  it('renderDoc writes what JSON.stringify writes of the object the template names', () => {
    const doc = { _id: 'x', n: 1.5, s: 'a"b', v: { z: [1] }, b: true, meta: undefined, flag: false, str: null };
    expect(JSON.parse(renderDoc(TEMPLATE, doc))).toEqual({
      n: 1.5, s: 'a"b', v: { z: [1] }, b: true, notB: false, bAsValue: true, vAsBoolean: true, notV: true, meta: [], flag: false, notFlag: true, str: null, 'key with "quotes"': 'a"b',
    });
  });
});
