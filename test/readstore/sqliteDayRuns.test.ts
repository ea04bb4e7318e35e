import fc from 'fast-check';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dayRunsByFind } from '../../src/readstore/dayRuns.js';
import type { CollectionSpec, DayRun, DayRunsQuery, DayRunsRow, Doc, ReadStore, StatColumns } from '../../src/readstore/readStore.js';
import { RUNS_PER_STATEMENT } from '../../src/readstore/sqliteDayRuns.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

/**
 * Issue 27 step 4 ("statistics from rollups with no per-row JavaScript work"): the embedded
 * store adds up day rows' stat groups into buckets in SQL (ReadStore.aggregateDayRuns); a store
 * without it (MongoDB) is read with find and added up in JavaScript (dayRunsByFind). Both must
 * give the same buckets. Values are integers, so sums are exact whatever the order of addition.
 */
const GROUPS = ['a', 'b', 'c'] as const;
const cols = (g: string): StatColumns => ({ count: `${g}c`, sum: `${g}s`, min: `${g}n`, max: `${g}x` });
const SPEC: CollectionSpec = {
  name: 'day_stats',
  indexes: [{ fields: [['user_id', 1], ['day', 1]] }],
  columns: ['src', ...GROUPS.flatMap((g) => Object.values(cols(g)))],
};
const DAY_MS = 86_400_000;
const dayOf = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * DAY_MS).toISOString().slice(0, 10);

const sorted = (rows: DayRunsRow[]) => [...rows].sort((x, y) => x.bucket - y.bucket || String(x.series).localeCompare(String(y.series)));

let store: SqliteReadStore;
let n = 0;
const fresh = async () => {
  const s = new SqliteReadStore({ path: join(tempDir(), `day-runs-${++n}.sqlite`) });
  await s.ensureCollections([SPEC]);
  return s;
};
const put = (s: ReadStore, docs: Doc[]) => s.applyChanges(docs.map((doc) => ({ op: 'put' as const, collection: SPEC.name, doc })));
const both = async (s: SqliteReadStore, q: DayRunsQuery) => ({ sql: sorted(await s.aggregateDayRuns(SPEC.name, q)), js: sorted(await dayRunsByFind(s, SPEC.name, q)) });

beforeAll(async () => {
  store = await fresh();
});
afterAll(async () => {
  await store?.close();
});

describe('aggregateDayRuns: buckets added up in SQL (issue 27 step 4)', () => {
  it('puts a piece of day d of a run into its bucket on the first day plus stride × (d - first day), adding only the groups that hold values', async () => {
    const s = await fresh();
    await put(s, [
      { _id: 'r1', user_id: 'u1', day: dayOf(1), src: 'x', ac: 2, as: 10, an: 3, ax: 7 },
      { _id: 'r2', user_id: 'u1', day: dayOf(2), src: 'x', ac: 1, as: 4, an: 4, ax: 4, bc: 1, bs: -2, bn: -2, bx: -2 },
      // Another user, and a day outside the run: neither counts.
      { _id: 'r3', user_id: 'u2', day: dayOf(1), src: 'x', ac: 5, as: 5, an: 1, ax: 1 },
      { _id: 'r4', user_id: 'u1', day: dayOf(9), src: 'x', ac: 5, as: 5, an: 1, ax: 1 },
    ]);
    const run: DayRun = { from: dayOf(0), to: dayOf(3), stride: 2, pieces: [{ bucket: 1, groups: [cols('a'), cols('b')] }, { bucket: 2, groups: [cols('b')] }] };
    const q: DayRunsQuery = { filter: { user_id: 'u1' }, dayField: 'day', series: ['src'], runs: [run] };
    const expected = [
      { bucket: 3, series: ['x'], count: 2, sum: 10, min: 3, max: 7 },
      { bucket: 5, series: ['x'], count: 2, sum: 2, min: -2, max: 4 },
      { bucket: 6, series: ['x'], count: 1, sum: -2, min: -2, max: -2 },
    ];
    const { sql, js } = await both(s, q);
    expect(sql).toEqual(expected);
    expect(js).toEqual(expected);
    await s.close();
  });

  it(`gives what find and JavaScript give, for any documents and runs, also past ${RUNS_PER_STATEMENT} runs (several statements, buckets shared at their borders)`, async () => {
    const stat = fc.record({ c: fc.integer({ min: 1, max: 9 }), s: fc.integer({ min: -500, max: 500 }), n: fc.integer({ min: -50, max: 50 }), w: fc.integer({ min: 0, max: 40 }) });
    const docArb = fc.record({
      user: fc.constantFrom('u1', 'u2'),
      day: fc.integer({ min: 0, max: 239 }),
      src: fc.constantFrom('x', 'y', 'z'),
      groups: fc.record({ a: fc.option(stat), b: fc.option(stat), c: fc.option(stat) }),
    });
    const pieceArb = fc.record({ bucket: fc.integer({ min: 0, max: 40 }), groups: fc.subarray([...GROUPS], { minLength: 1 }) });
    const runsArb = fc.record({
      // Cut points of the days 0..239 into runs: few long runs or many short ones.
      cuts: fc.oneof(fc.uniqueArray(fc.integer({ min: 1, max: 239 }), { maxLength: 8 }), fc.constant(Array.from({ length: 239 }, (_, i) => i + 1))),
      shapes: fc.array(fc.record({ stride: fc.integer({ min: 0, max: 3 }), pieces: fc.array(pieceArb, { minLength: 1, maxLength: 5 }) }), { minLength: 1, maxLength: 4 }),
      skip: fc.integer({ min: 0, max: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(docArb, { maxLength: 60 }), runsArb, async (docs, r) => {
        const s = await fresh();
        let id = 0;
        await put(
          s,
          docs.map((d) => {
            const doc: Doc = { _id: `d${id++}`, user_id: d.user, day: dayOf(d.day), src: d.src };
            for (const g of GROUPS) {
              const v = d.groups[g];
              if (v) Object.assign(doc, { [`${g}c`]: v.c, [`${g}s`]: v.s, [`${g}n`]: v.n, [`${g}x`]: v.n + v.w });
            }
            return doc;
          }),
        );
        const bounds = [0, ...[...r.cuts].sort((x, y) => x - y), 240];
        const runs: DayRun[] = [];
        for (let i = 0; i + 1 < bounds.length; i++) {
          // Every `skip`-th run left out: days between runs are not read.
          if (r.skip && i % (r.skip + 1) === r.skip) continue;
          const shape = r.shapes[i % r.shapes.length]!;
          runs.push({ from: dayOf(bounds[i]!), to: dayOf(bounds[i + 1]! - 1), stride: shape.stride, pieces: shape.pieces.map((p) => ({ bucket: p.bucket + i, groups: p.groups.map(cols) })) });
        }
        const { sql, js } = await both(s, { filter: { user_id: 'u1' }, dayField: 'day', series: ['src'], runs });
        expect(sql).toEqual(js);
        await s.close();
      }),
      { numRuns: 40 },
    );
  });

  it('answers no buckets for no runs and for a collection the store does not hold', async () => {
    const q: DayRunsQuery = { filter: { user_id: 'u1' }, dayField: 'day', series: ['src'], runs: [] };
    expect(await store.aggregateDayRuns(SPEC.name, q)).toEqual([]);
    expect(await store.aggregateDayRuns('no_such', { ...q, runs: [{ from: dayOf(0), to: dayOf(1), stride: 1, pieces: [{ bucket: 0, groups: [cols('a')] }] }] })).toEqual([]);
  });
});
