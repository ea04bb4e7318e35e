import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckpointMismatchError, type Doc, type PositionedChange, type ReadStore } from '../../src/readstore/readStore.js';

/** The read-model store port's contract; every adapter runs it. Collection names are unique per test. */
/** `noChangeStamp`: the store says it cannot tell cheaply (a store on a thread: the stamp is the thread's), as MongoDB does. */
export function readStoreContract(name: string, make: () => Promise<ReadStore>, options: { noChangeStamp?: boolean } = {}) {
  describe(`ReadStore contract: ${name}`, () => {
    let store: ReadStore;
    let c: string;
    beforeEach(async () => {
      store = await make();
      c = `c${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      // Some fields are declared columns and others are not, so both storage paths are covered.
      await store.ensureCollections([
        { name: c, indexes: [{ fields: [['user', 1], ['t', 1]] }, { fields: [['key', 1]], unique: true }], columns: ['ok', 'tag', 'n', 'lo', 'hi', 's', 'bytes'], booleans: ['ok'] },
      ]);
    });
    afterEach(async () => {
      await store.dropCollections([c]);
      await store.close();
    });

    const put = (doc: Doc) => ({ op: 'put' as const, collection: c, doc });

    it('put replaces the whole document and is idempotent', async () => {
      await store.applyChanges([put({ _id: 'a', key: 'a', v: 1, extra: true })]);
      await store.applyChanges([put({ _id: 'a', key: 'a', v: 2 })]);
      await store.applyChanges([put({ _id: 'a', key: 'a', v: 2 })]);
      expect(await store.get(c, 'a')).toEqual({ _id: 'a', key: 'a', v: 2 });
      expect(await store.count(c)).toBe(1);
    });

    it('update supports set, setOnInsert, unset, inc, min, max and upsert like MongoDB', async () => {
      await store.applyChanges([{ op: 'update', collection: c, id: 'x', set: { v: 1 } }]);
      expect(await store.get(c, 'x')).toBeNull();
      const up = { op: 'update' as const, collection: c, id: 'x', upsert: true, setOnInsert: { first: 1, key: 'x' }, inc: { n: 2, 'nested.k': 1 }, min: { lo: 5 }, max: { hi: 5 } };
      await store.applyChanges([up]);
      await store.applyChanges([{ ...up, setOnInsert: { first: 2, key: 'x' }, inc: { n: 3, 'nested.k': 1 }, min: { lo: 3 }, max: { hi: 4 }, set: { s: 'y', gone: 1 } }]);
      await store.applyChanges([{ op: 'update', collection: c, id: 'x', unset: ['gone'] }]);
      expect(await store.get(c, 'x')).toEqual({ _id: 'x', first: 1, key: 'x', n: 5, nested: { k: 2 }, lo: 3, hi: 5, s: 'y' });
    });

    it('updateIf writes only while the document holds the expected values (null matches missing), never creates one, and of racing callers expecting the same values exactly one wins', async () => {
      await store.applyChanges([put({ _id: 'cas', key: 'cas', tag: 'a', n: 1, other: 'x' })]);
      expect(await store.updateIf(c, 'cas', { tag: 'b' }, { n: 2 })).toBe(false);
      expect(await store.updateIf(c, 'cas', { tag: 'a', missing: null }, { n: 2, tag: 'b' })).toBe(true);
      expect(await store.get(c, 'cas')).toEqual({ _id: 'cas', key: 'cas', tag: 'b', n: 2, other: 'x' });
      expect(await store.updateIf(c, 'absent', {}, { n: 1 })).toBe(false);
      expect(await store.get(c, 'absent')).toBeNull();
      const racers = await Promise.all(Array.from({ length: 5 }, (_, i) => store.updateIf(c, 'cas', { tag: 'b', n: 2 }, { tag: `winner-${i}`, n: 3 })));
      expect(racers.filter(Boolean)).toHaveLength(1);
      expect((await store.get(c, 'cas'))!.tag).toBe(`winner-${racers.indexOf(true)}`);
    });

    it('a declared field keeps its exact value through every kind of change: string, number, boolean, null, object, missing', async () => {
      const values: unknown[] = ['x', 42, 1.5, true, false, null, { a: [1, 'b'] }, ['q'], 'again'];
      for (const v of values) {
        await store.applyChanges([{ op: 'update', collection: c, id: 'v', upsert: true, set: { tag: v, other: v } }]);
        expect(await store.get(c, 'v')).toEqual({ _id: 'v', tag: v, other: v });
        await store.applyChanges([put({ _id: 'p', tag: v })]);
        expect(await store.get(c, 'p')).toEqual({ _id: 'p', tag: v });
      }
      for (const v of [true, false, null, 1, 0, 'yes', true]) {
        await store.applyChanges([{ op: 'update', collection: c, id: 'b', upsert: true, set: { ok: v } }]);
        expect(await store.get(c, 'b')).toEqual({ _id: 'b', ok: v });
      }
      await store.applyChanges([{ op: 'update', collection: c, id: 'v', unset: ['tag'] }]);
      expect(await store.get(c, 'v')).toEqual({ _id: 'v', other: 'again' });
      expect((await store.find(c, { filter: { tag: { $exists: false } }, sort: [['_id', 1]] })).map((d) => d._id)).toEqual(['b', 'v']);
    });

    it('counters (inc, min, max) on declared fields combine across upserts and keep other fields', async () => {
      for (const [n, x] of [[1, 5], [2, 3], [4, 9]] as const) {
        await store.applyChanges([{ op: 'update', collection: c, id: 'ctr', upsert: true, setOnInsert: { key: 'ctr', created: n }, set: { s: `s${n}` }, inc: { n }, min: { lo: x }, max: { hi: x } }]);
      }
      expect(await store.get(c, 'ctr')).toEqual({ _id: 'ctr', key: 'ctr', created: 1, s: 's4', n: 7, lo: 3, hi: 9 });
      await store.applyChanges([{ op: 'update', collection: c, id: 'ctr', min: { lo: 'a' }, max: { hi: 'z' } }]);
      expect(await store.get(c, 'ctr')).toMatchObject({ lo: 3, hi: 'z' });
    });

    it('find with fields returns only those fields (and _id), with their exact values, for declared and other fields', async () => {
      await store.applyChanges([
        put({ _id: 'f1', key: 'f1', user: 'u', t: 1, ok: true, tag: null, other: { a: 1 }, s: 'x' }),
        put({ _id: 'f2', key: 'f2', user: 'u', t: 2, ok: false, s: 'y' }),
      ]);
      const rows = await store.find(c, { filter: { user: 'u' }, sort: [['t', 1]], fields: ['t', 'ok', 'tag', 'other', 's'] });
      expect(rows).toEqual([
        { _id: 'f1', t: 1, ok: true, tag: null, other: { a: 1 }, s: 'x' },
        { _id: 'f2', t: 2, ok: false, s: 'y' },
      ]);
      expect(await store.find(c, { filter: { user: 'u' }, sort: [['t', 1]], fields: ['t'] })).toEqual([{ _id: 'f1', t: 1 }, { _id: 'f2', t: 2 }]);
    });

    it('bytes (a Buffer) in a declared field read back as a Buffer with the same bytes (issue 38: packed rollups)', async () => {
      const bytes = Buffer.from([0, 1, 2, 255, 0, 128]);
      await store.applyChanges([put({ _id: 'b', key: 'b', bytes })]);
      const back = await store.get(c, 'b');
      expect(Buffer.isBuffer(back?.bytes)).toBe(true);
      expect(back).toEqual({ _id: 'b', key: 'b', bytes });
      const [found] = await store.find(c, { filter: { key: 'b' }, fields: ['bytes'] });
      expect(Buffer.isBuffer(found?.bytes) && found.bytes.equals(bytes)).toBe(true);
    });

    it('a collection whose declared version changed is recreated empty and reported; one written before it declared a version too, an empty one not (issue 38: read-model upgrade)', async () => {
      const v = `v${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      const spec = { name: v, indexes: [{ fields: [['user', 1]] as const }] };
      await store.ensureCollections([spec]);
      await store.applyChanges([{ op: 'put', collection: v, doc: { _id: '1', user: 'u' } }]);
      expect(await store.ensureCollections([{ ...spec, version: 2 }])).toEqual([v]);
      expect(await store.count(v)).toBe(0);
      await store.applyChanges([{ op: 'put', collection: v, doc: { _id: '2', user: 'u' } }]);
      expect(await store.ensureCollections([{ ...spec, version: 2 }])).toEqual([]);
      expect(await store.count(v)).toBe(1);
      expect(await store.ensureCollections([{ ...spec, version: 3 }])).toEqual([v]);
      expect(await store.count(v)).toBe(0);
      const empty = `e${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      await store.ensureCollections([{ name: empty }]);
      expect(await store.ensureCollections([{ name: empty, version: 1 }])).toEqual(store.kind === 'sqlite' ? [empty] : []);
      await store.dropCollections([v, empty]);
    });

    it('delete and deleteMany remove by id and by filter', async () => {
      await store.applyChanges([1, 2, 3, 4].map((i) => put({ _id: `d${i}`, key: `d${i}`, user: i % 2 ? 'u1' : 'u2', t: i })));
      await store.applyChanges([{ op: 'delete', collection: c, id: 'd1' }, { op: 'delete', collection: c, id: 'missing' }]);
      await store.applyChanges([{ op: 'deleteMany', collection: c, filter: { user: 'u2', t: { $gte: 4 } } }]);
      expect((await store.find(c, { sort: [['t', 1]] })).map((d) => d._id)).toEqual(['d2', 'd3']);
    });

    it('find filters with equality, ranges, $in, $ne, $exists and booleans', async () => {
      await store.applyChanges([
        put({ _id: '1', key: '1', user: 'u', t: '2026-01-01T00:00:00.000Z', ok: true, tag: 'a' }),
        put({ _id: '2', key: '2', user: 'u', t: '2026-01-02T00:00:00.000Z', ok: false, tag: null }),
        put({ _id: '3', key: '3', user: 'u', t: '2026-01-03T00:00:00.000Z', ok: true }),
        put({ _id: '4', key: '4', user: 'v', t: '2026-01-02T00:00:00.000Z', ok: true, tag: 'b' }),
      ]);
      const ids = async (filter: Record<string, unknown>) => (await store.find(c, { filter: filter as never, sort: [['_id', 1]] })).map((d) => d._id);
      expect(await ids({ user: 'u', t: { $gte: '2026-01-02', $lt: '2026-01-03T00:00:00.000Z' } })).toEqual(['2']);
      expect(await ids({ ok: true })).toEqual(['1', '3', '4']);
      expect(await ids({ ok: false })).toEqual(['2']);
      expect(await ids({ tag: { $in: ['a', 'b'] } })).toEqual(['1', '4']);
      expect(await ids({ tag: { $ne: 'a' } })).toEqual(['2', '3', '4']);
      expect(await ids({ tag: { $exists: true } })).toEqual(['1', '2', '4']);
      expect(await ids({ tag: null })).toEqual(['2', '3']);
      expect(await store.count(c, { user: 'u' })).toBe(3);
    });

    it('pages with a keyset cursor in sort order without skipping or repeating, ties broken by _id', async () => {
      const docs = Array.from({ length: 25 }, (_, i) => put({ _id: `k${String(i).padStart(2, '0')}`, key: `k${i}`, user: 'u', t: Math.floor(i / 4) }));
      await store.applyChanges(docs.reverse());
      const seen: string[] = [];
      let after: (string | number)[] | undefined;
      for (;;) {
        const page = await store.find(c, { filter: { user: 'u' }, sort: [['t', 1]], limit: 7, after });
        if (page.length === 0) break;
        seen.push(...page.map((d) => d._id));
        const last = page[page.length - 1]!;
        after = [last.t as number, last._id];
      }
      expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(2, '0')}`));
      const desc = await store.find(c, { filter: { user: 'u' }, sort: [['t', -1]], limit: 3, after: [6, 'k24'] });
      expect(desc.map((d) => d._id)).toEqual(['k23', 'k22', 'k21']);
    });

    it('applyBatch advances the checkpoint with the changes and refuses a stale expected position', async () => {
      const proj = `p-${c}`;
      expect(await store.getCheckpoint(proj)).toBeNull();
      const change = (position: number, n: number) => ({ op: 'update' as const, collection: c, id: 'cnt', upsert: true, setOnInsert: { key: 'cnt' }, inc: { n }, position, index: 0 });
      await store.applyBatch({ projection: proj, expectedPosition: 0, position: 10, mode: 'live', lastEventAt: null, changes: [change(5, 1), change(10, 2)] });
      expect((await store.getCheckpoint(proj))?.position).toBe(10);
      await expect(
        store.applyBatch({ projection: proj, expectedPosition: 0, position: 12, mode: 'live', lastEventAt: null, changes: [change(12, 100)] }),
      ).rejects.toBeInstanceOf(CheckpointMismatchError);
      expect((await store.get(c, 'cnt'))?.n).toBe(3);
      await store.setCheckpoint(proj, 0, 'rebuilding');
      await expect(
        store.applyBatch({ projection: proj, expectedPosition: 0, position: 12, mode: 'live', lastEventAt: null, changes: [change(12, 100)] }),
      ).rejects.toBeInstanceOf(CheckpointMismatchError);
      expect((await store.listCheckpoints()).find((x) => x.projection === proj)?.status).toBe('rebuilding');
    });

    it('aggregate groups with count, sum, min and max, in group order, filtered and limited; aggregateEach hands over the same rows one at a time', async () => {
      await store.applyChanges([
        put({ _id: 'a1', key: 'a1', user: 'u', day: '2026-01-02', t: 3, v: 10 }),
        put({ _id: 'a2', key: 'a2', user: 'u', day: '2026-01-01', t: 1, v: 5 }),
        put({ _id: 'a3', key: 'a3', user: 'u', day: '2026-01-02', t: 2, v: 1 }),
        put({ _id: 'a4', key: 'a4', user: 'x', day: '2026-01-01', t: 9, v: 100 }),
      ]);
      const rows = await store.aggregate(c, { filter: { user: 'u' }, groupBy: ['day'], sum: ['v'], min: ['t'], max: ['t'] });
      expect(rows).toEqual([
        { group: { day: '2026-01-01' }, count: 1, sum: { v: 5 }, min: { t: 1 }, max: { t: 1 } },
        { group: { day: '2026-01-02' }, count: 2, sum: { v: 11 }, min: { t: 2 }, max: { t: 3 } },
      ]);
      expect(await store.aggregate(c, { groupBy: ['day'], limit: 1 })).toEqual([{ group: { day: '2026-01-01' }, count: 2, sum: {}, min: {}, max: {} }]);
      // aggregateEach hands over the same rows one at a time, in the same order (issue 38: a fold holds no list of groups).
      const handed: unknown[] = [];
      await store.aggregateEach(c, { filter: { user: 'u' }, groupBy: ['day'], sum: ['v'], min: ['t'], max: ['t'] }, (row) => handed.push(row));
      expect(handed).toEqual(rows);
      await store.aggregateEach('never_declared', { groupBy: ['day'] }, (row) => handed.push(row));
      expect(handed).toHaveLength(2);
    });

    it('joinBytes joins each group\'s bytes whole (zero bytes, invalid UTF-8), groups in order, filtered; documents without bytes there left out (issue 38: a series\' days as one value)', async () => {
      const parts: Record<string, Buffer> = {
        j1: Buffer.from([0, 0, 0xc3, 0x28, 0xff]),
        j2: Buffer.from([0xe2, 0x82, 0, 0xfe, 0xed, 0xfa, 0xce]),
        j3: Buffer.from([0x80]),
        j4: Buffer.from([7, 0]),
      };
      await store.applyChanges([
        put({ _id: 'j1', key: 'j1', user: 'u', tag: 'b', bytes: parts.j1 }),
        put({ _id: 'j2', key: 'j2', user: 'u', tag: 'b', bytes: parts.j2 }),
        put({ _id: 'j3', key: 'j3', user: 'u', tag: 'b', bytes: parts.j3 }),
        put({ _id: 'j4', key: 'j4', user: 'u', tag: 'a', bytes: parts.j4 }),
        put({ _id: 'j5', key: 'j5', user: 'u', tag: 'a', bytes: 12 }),
        put({ _id: 'j6', key: 'j6', user: 'u', tag: 'c' }),
        put({ _id: 'j7', key: 'j7', user: 'x', tag: 'a', bytes: Buffer.from([1, 2, 3]) }),
      ]);
      const joined = await store.joinBytes(c, { filter: { user: 'u' }, groupBy: ['tag'], field: 'bytes' });
      expect(joined.map((g) => g.group)).toEqual([{ tag: 'a' }, { tag: 'b' }]);
      expect(Buffer.isBuffer(joined[0]!.bytes) && joined[0]!.bytes.equals(parts.j4!)).toBe(true);
      // In no particular order within a group: the join is one of the orders of its parts.
      const orders = [['j1', 'j2', 'j3'], ['j1', 'j3', 'j2'], ['j2', 'j1', 'j3'], ['j2', 'j3', 'j1'], ['j3', 'j1', 'j2'], ['j3', 'j2', 'j1']];
      expect(orders.some((o) => Buffer.concat(o.map((k) => parts[k]!)).equals(joined[1]!.bytes))).toBe(true);
      const all = await store.joinBytes(c, { groupBy: ['user', 'tag'], field: 'bytes' });
      expect(all.map((g) => g.group)).toEqual([{ user: 'u', tag: 'a' }, { user: 'u', tag: 'b' }, { user: 'x', tag: 'a' }]);
      expect(await store.joinBytes(c, { filter: { user: 'nobody' }, groupBy: [], field: 'bytes' })).toEqual([]);
      const [one] = await store.joinBytes(c, { filter: { user: 'x' }, groupBy: [], field: 'bytes' });
      expect(one?.group).toEqual({});
      expect(one?.bytes.equals(Buffer.from([1, 2, 3]))).toBe(true);
    });

    it('pages over NULL and missing sort keys in both directions: nulls first ascending, last descending, none skipped or repeated', async () => {
      const ts: (number | null | undefined)[] = [3, null, 1, undefined, 2, null, 1, undefined, 3, 2];
      await store.applyChanges(ts.map((t, i) => put({ _id: `n${i}`, key: `n${i}`, user: 'u', ...(t === undefined ? {} : { t }) })));
      const pageAll = async (dir: 1 | -1, limit: number) => {
        const seen: string[] = [];
        let after: (string | number | null)[] | undefined;
        for (let guard = 0; guard < 50; guard++) {
          const page = await store.find(c, { filter: { user: 'u' }, sort: [['t', dir]], limit, after });
          if (page.length === 0) return seen;
          seen.push(...page.map((d) => d._id));
          const last = page[page.length - 1]!;
          after = [(last.t as number | undefined) ?? null, last._id];
        }
        throw new Error('paging did not end');
      };
      const nulls = ['n1', 'n3', 'n5', 'n7'];
      const ascending = [...nulls, 'n2', 'n6', 'n4', 'n9', 'n0', 'n8'];
      const descending = ['n8', 'n0', 'n9', 'n4', 'n6', 'n2', ...nulls.slice().reverse()];
      for (const limit of [1, 2, 3, 4, 20]) {
        expect(await pageAll(1, limit)).toEqual(ascending);
        expect(await pageAll(-1, limit)).toEqual(descending);
      }
    });

    it('replay guard: a batch that failed part-way is replayed whole and the result is that of one run (counters once, last write wins, deletes kept)', async () => {
      const proj = `p-${c}`;
      const other = `${c}x`;
      await store.ensureCollections([{ name: other }]);
      const batch = (changes: PositionedChange[], bad: boolean) => ({
        projection: proj,
        expectedPosition: 0,
        position: 30,
        mode: 'live' as const,
        lastEventAt: null,
        // A change to a collection name no store accepts makes the batch fail after the others
        // were sent (all of them on a store without transactions).
        changes: bad ? [...changes, { op: 'put' as const, collection: 'no such collection!', doc: { _id: 'x' }, position: 30, index: 9 }] : changes,
      });
      const changes: PositionedChange[] = [
        { op: 'update', collection: c, id: 'ctr', upsert: true, setOnInsert: { key: 'ctr', first: 10 }, inc: { n: 1 }, max: { hi: 5 }, position: 10, index: 0 },
        { op: 'put', collection: c, doc: { _id: 'doc', key: 'doc', v: 1 }, position: 10, index: 1 },
        { op: 'update', collection: c, id: 'doc', set: { v: 2 }, inc: { n: 1 }, position: 20, index: 0 },
        { op: 'update', collection: c, id: 'ctr', upsert: true, setOnInsert: { key: 'ctr', first: 20 }, inc: { n: 2 }, set: { s: 'second' }, position: 20, index: 1 },
        { op: 'put', collection: other, doc: { _id: 'gone' }, position: 20, index: 2 },
        { op: 'delete', collection: other, id: 'gone', position: 30, index: 0 },
        { op: 'update', collection: c, id: 'doc', inc: { n: 10 }, position: 30, index: 1 },
        { op: 'deleteMany', collection: c, filter: { key: 'tmp' }, position: 30, index: 2 },
      ];
      await expect(store.applyBatch(batch(changes, true))).rejects.toThrow();
      expect((await store.getCheckpoint(proj))?.position ?? 0).toBe(0);
      await store.applyBatch(batch(changes, false));
      expect(await store.get(c, 'ctr')).toEqual({ _id: 'ctr', key: 'ctr', first: 10, n: 3, hi: 5, s: 'second' });
      expect(await store.get(c, 'doc')).toEqual({ _id: 'doc', key: 'doc', v: 2, n: 11 });
      expect(await store.get(other, 'gone')).toBeNull();
      expect((await store.getCheckpoint(proj))?.position).toBe(30);
      // The same batch once more, as a runner that did not see the advance would send it: refused, nothing doubled.
      await expect(store.applyBatch(batch(changes, false))).rejects.toBeInstanceOf(CheckpointMismatchError);
      expect((await store.get(c, 'ctr'))?.n).toBe(3);
      await store.dropCollections([other]);
    });

    it('replay guard: a rebuild restarted from position 0 reaches the same documents as the first run', async () => {
      const proj = `r-${c}`;
      const changes: PositionedChange[] = [
        { op: 'update', collection: c, id: 'r', upsert: true, setOnInsert: { key: 'r' }, inc: { n: 1 }, position: 5, index: 0 },
        { op: 'update', collection: c, id: 'r', set: { s: 'a' }, inc: { n: 1 }, position: 6, index: 0 },
      ];
      const run = async () => {
        await store.setCheckpoint(proj, 0, 'rebuilding');
        await store.dropCollections([c]);
        await store.ensureCollections([{ name: c, columns: ['n', 's'] }], { indexes: false });
        await store.applyBatch({ projection: proj, expectedPosition: 0, position: 6, mode: 'rebuilding', lastEventAt: null, changes });
        await store.setCheckpoint(proj, 6, 'live');
      };
      await run();
      await run();
      expect(await store.get(c, 'r')).toEqual({ _id: 'r', key: 'r', n: 2, s: 'a' });
      expect(await store.getCheckpoint(proj)).toMatchObject({ position: 6, status: 'live' });
    });

    it('changeStamp (issue 27): given, it changes after every kind of write (applyChanges, updateIf, applyBatch, setCheckpoint, dropCollections) and not after reads; MongoDB gives none', async () => {
      const first = store.changeStamp();
      if (store.kind === 'mongodb' || options.noChangeStamp) return expect(first).toBeNull();
      const seen = [first];
      const changed = async (write: () => Promise<unknown>) => {
        await write();
        const stamp = store.changeStamp();
        expect(seen).not.toContain(stamp);
        seen.push(stamp);
      };
      await store.get(c, 'a');
      await store.find(c);
      expect(store.changeStamp()).toBe(first);
      await changed(() => store.applyChanges([put({ _id: 'a', key: 'a', n: 1 })]));
      await changed(() => store.updateIf(c, 'a', { n: 1 }, { n: 2 }));
      const proj = `p${randomUUID().slice(0, 8)}`;
      await changed(() => store.applyBatch({ projection: proj, expectedPosition: 0, position: 1, mode: 'live', lastEventAt: null, changes: [{ ...put({ _id: 'b', key: 'b' }), position: 1, index: 0 }] }));
      await changed(() => store.setCheckpoint(proj, 2, 'live'));
      await changed(() => store.dropCollections([c]));
      await store.ensureCollections([{ name: c }]);
    });

    it('dropCollections removes the documents; reads of a dropped collection are empty', async () => {
      await store.applyChanges([put({ _id: 'a', key: 'a' })]);
      await store.dropCollections([c]);
      expect(await store.get(c, 'a')).toBeNull();
      expect(await store.find(c)).toEqual([]);
      await store.ensureCollections([{ name: c }]);
    });
  });
}
