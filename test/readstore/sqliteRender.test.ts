import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderDoc, type RenderTemplate } from '../../src/readstore/renderedRows.js';
import type { Doc } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { compileRender } from '../../src/readstore/sqliteRender.js';
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

describe('embedded read store: rows rendered as JSON in SQL (findRendered, issue 27 step 4)', () => {
  it('writes every row byte for byte as renderDoc writes its document: each kind over columns, boolean columns and doc fields; escapes, unicode, fractions, booleans and numbers where the other is declared, nulls and missing fields', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([SPEC]);
    const all = docs();
    await store.applyChanges(all.map((doc) => ({ op: 'put', collection: 'things', doc })));
    const sort = [['n', 1]] as const;
    const found = await store.find('things', { filter: { k: 'k' }, sort });
    const rendered = await store.findRendered('things', { filter: { k: 'k' }, sort }, TEMPLATE);
    expect(found.length).toBe(all.length);
    expect(rendered.json).toEqual(found.map((d) => renderDoc(TEMPLATE, d)));
    expect(rendered.sortValues).toEqual(found.map((d) => [d.n, d._id]));
    for (const j of rendered.json) expect(() => JSON.parse(j)).not.toThrow();
    await store.close();
  });

  it('writes rows whose values have their declared kinds in SQL alone: no row falls back to its document', async () => {
    const path = join(tempDir(), 'read.sqlite');
    const store = new SqliteReadStore({ path });
    await store.ensureCollections([SPEC]);
    const typed: Doc[] = ODD_STRINGS.flatMap((s, i) =>
      [true, false, null].map((b, j): Doc => ({ _id: `t${i}-${j}`, k: 'k', n: i * 10 + j + 0.25, s: j === 2 ? null : s, v: ODD_VALUES[(i + j) % ODD_VALUES.length], b, meta: { s, n: i / 3 }, flag: j === 0, str: s })),
    );
    await store.applyChanges(typed.map((doc) => ({ op: 'put', collection: 'things', doc })));
    const found = await store.find('things', { sort: [['n', 1]] });
    await store.close();
    // `boolean` of a field that is no boolean column (vAsBoolean) is the one kind written from the document.
    const typedTemplate = TEMPLATE.filter((f) => f.key !== 'vAsBoolean');
    const compiled = compileRender(new SqliteTable(SPEC), typedTemplate);
    const db = new Database(path, { readonly: true });
    const rows = db.prepare(`SELECT ${compiled.selectList} FROM rm_things ORDER BY "f_n"`).raw(true).all() as unknown[][];
    db.close();
    expect(rows.map((r) => compiled.join(r))).toEqual(found.map((d) => renderDoc(typedTemplate, d)));
  });

  it('pages after a cursor and within a limit exactly as find does', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([SPEC]);
    await store.applyChanges(docs().map((doc) => ({ op: 'put', collection: 'things', doc })));
    const query = { filter: { k: 'k', n: { $gte: 10 } }, sort: [['n', -1]] as const, after: [100, 'd100'], limit: 25 };
    const found = await store.find('things', query);
    const rendered = await store.findRendered('things', query, TEMPLATE);
    expect(found.length).toBe(25);
    expect(rendered.json).toEqual(found.map((d) => renderDoc(TEMPLATE, d)));
    await store.close();
  });

  it('renderDoc writes what JSON.stringify writes of the object the template names', () => {
    const doc = { _id: 'x', n: 1.5, s: 'a"b', v: { z: [1] }, b: true, meta: undefined, flag: false, str: null };
    expect(JSON.parse(renderDoc(TEMPLATE, doc))).toEqual({
      n: 1.5, s: 'a"b', v: { z: [1] }, b: true, notB: false, bAsValue: true, vAsBoolean: true, notV: true, meta: [], flag: false, notFlag: true, str: null, 'key with "quotes"': 'a"b',
    });
  });
});
