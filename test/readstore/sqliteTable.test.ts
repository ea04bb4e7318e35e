import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { SqliteTable } from '../../src/readstore/sqliteTable.js';
import { tempDir } from '../support/tmp.js';

const table = new SqliteTable({ name: 'things', indexes: [{ fields: [['user_id', 1], ['start', 1]] }], columns: ['value', 'flag', 'n'], booleans: ['flag'] });

/** A small deterministic generator, so a failure names its seed. */
function random(seed: number) {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const FIELDS = ['user_id', 'start', 'value', 'flag', 'n', 'meta', 'note', '_id'] as const;
const VALUES = [undefined, null, 'text', 42, 1.5, true, false, { a: 1 }, ['x']];

describe('SqliteTable.encodeMerged (an upsert row without spreading its layers)', () => {
  it('gives the values encode gives for { _id, ...layer, ... }: the first place of a field, the last layer’s value, undefined and _id alike', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const next = random(seed);
      const layers = Array.from({ length: 1 + Math.floor(next() * 4) }, () => {
        if (next() < 0.2) return undefined;
        const layer: Record<string, unknown> = {};
        for (const f of FIELDS) if (next() < 0.4 && (f !== '_id' || next() < 0.3)) layer[f] = VALUES[Math.floor(next() * VALUES.length)];
        return layer;
      });
      const spread = Object.assign({ _id: 'k' }, ...layers.map((l) => l ?? {}));
      expect(table.encodeMerged('k', layers), `seed ${seed}`).toEqual(table.encode(spread));
    }
  });
});

describe('embedded read store: update plans reused from one update to the next', () => {
  it('a field of the same name whose value a column no longer holds alone (a string, then an object, then null) is stored as given each time', async () => {
    const store = new SqliteReadStore({ path: join(tempDir(), 'read.sqlite') });
    await store.ensureCollections([{ name: 'things', indexes: table.spec.indexes, columns: table.spec.columns, booleans: table.spec.booleans }]);
    const values = ['text', { nested: [1, 2] }, null, 7, 'again'];
    for (const [i, value] of values.entries()) {
      await store.applyChanges([{ op: 'update', collection: 'things', id: `t${i}`, upsert: true, set: { user_id: 'u', value }, setOnInsert: { n: i } }]);
      await store.applyChanges([{ op: 'update', collection: 'things', id: 't0', set: { value } }]);
    }
    // t0 was updated with every value in turn: it holds the last.
    for (const [i, value] of values.entries()) expect(await store.get('things', `t${i}`)).toEqual({ _id: `t${i}`, user_id: 'u', value: i === 0 ? 'again' : value, n: i });
    await store.close();
  });
});
