import { describe, expect, it } from 'vitest';
import { aggregatePipeline, findCommand, indexKeys } from '../../src/readstore/mongoQuery.js';
import { MongoReadStore } from '../../src/readstore/mongoReadStore.js';
import { withTieBreaker, type CollectionSpec, type Filter, type SortSpec } from '../../src/readstore/readStore.js';
import { projections } from '../../projections/index.js';
import { hotCollections, recordHotQueries } from './indexedQueries.js';

/**
 * What the MongoDB read store sends, checked without a server: the commands it builds, and a
 * stand-in database that records every call. The plans the server makes of them are asserted
 * with explain() in mongoQueryPlans.test.ts, wherever MongoDB is reachable.
 */
type Call = { coll: string; op: string; args: unknown[] };

function fakeStore(epoch = 2, existingIndexes: { name: string; key: Record<string, number>; expireAfterSeconds?: number }[] = []) {
  const calls: Call[] = [];
  const record =
    (coll: string, op: string, answer: unknown) =>
    async (...args: unknown[]) => {
      calls.push({ coll, op, args });
      return answer;
    };
  const collection = (coll: string) => ({
    createIndex: record(coll, 'createIndex', 'ok'),
    bulkWrite: record(coll, 'bulkWrite', {}),
    findOneAndUpdate: record(coll, 'findOneAndUpdate', { _id: 'p', epoch }),
    updateOne: record(coll, 'updateOne', { matchedCount: 1 }),
    findOne: record(coll, 'findOne', { _id: 'p' }),
    indexes: record(coll, 'indexes', existingIndexes),
    dropIndex: record(coll, 'dropIndex', undefined),
    find: (...args: unknown[]) => {
      calls.push({ coll, op: 'find', args });
      return { limit: () => undefined, toArray: async () => [] };
    },
  });
  const db = { collection, createCollection: record('-', 'createCollection', undefined) };
  const Ctor = MongoReadStore as unknown as new (handle: unknown, db: unknown) => MongoReadStore;
  return { calls, store: new Ctor({ client: {}, release: async () => {} }, db) };
}

/** Equality conditions of a filter: fields an index may lead with before the sorted keys. */
function equalityFields(filter: Filter | undefined): Set<string> {
  const out = new Set<string>();
  for (const [f, c] of Object.entries(filter ?? {})) if (c === null || typeof c !== 'object' || ('$eq' in c && Object.keys(c).length === 1)) out.add(f);
  return out;
}

/** An index gives the sorted page by a scan when it is equality fields, then the sort keys in order (all directions as given, or all reversed). */
function servedBy(spec: CollectionSpec, filter: Filter | undefined, sort: SortSpec): readonly (readonly [string, 1 | -1])[] | null {
  const eq = equalityFields(filter);
  for (const ix of spec.indexes ?? []) {
    if (ix.unique) continue;
    const keys = indexKeys(ix.fields);
    const cut = keys.length - sort.length;
    if (cut < 0 || !keys.slice(0, cut).every(([f]) => eq.has(f))) continue;
    const tail = keys.slice(cut);
    const same = tail.every(([f, d], i) => f === sort[i]![0] && d === sort[i]![1]);
    const reversed = tail.every(([f, d], i) => f === sort[i]![0] && d === -sort[i]![1]);
    if (same || reversed) return keys;
  }
  return null;
}

describe('MongoDB read store: requests (no server needed)', () => {
  it('every index ends in the _id tie-breaker, in the direction of its last key; unique indexes keep their exact keys', async () => {
    expect(indexKeys([['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]])).toEqual([['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1], ['_id', 1]]);
    expect(indexKeys([['log', 1], ['seq', -1]])).toEqual([['log', 1], ['seq', -1], ['_id', -1]]);
    const { calls, store } = fakeStore();
    await store.ensureCollections([{ name: 'c1', indexes: [{ fields: [['a', 1], ['b', -1]] }, { fields: [['k', 1]], unique: true }] }]);
    const made = calls.filter((c) => c.op === 'createIndex').map((c) => [[...(c.args[0] as Map<string, number>)], c.args[1]]);
    expect(made).toEqual([
      [[['a', 1], ['b', -1], ['_id', -1]], {}],
      [[['k', 1]], { unique: true }],
    ]);
  });

  it('a collection kept through its versions (extendInPlace) drops the indexes it no longer declares, keeping _id and the expiry index; others drop nothing', async () => {
    type Existing = { name: string; key: Record<string, number>; expireAfterSeconds?: number };
    const existing: Existing[] = [
      { name: '_id_', key: { _id: 1 } },
      { name: 'a_1__id_1', key: { a: 1, _id: 1 } },
      { name: 'old_1__id_-1', key: { old: 1, _id: -1 } },
      { name: 'k_1', key: { k: 1 } },
      { name: 'expires', key: { _expires_at: 1 }, expireAfterSeconds: 0 },
    ];
    const { calls, store } = fakeStore(2, existing);
    const spec = { name: 'log', indexes: [{ fields: [['a', 1]] as const }, { fields: [['k', 1]] as const, unique: true }], extendInPlace: true };
    await store.ensureCollections([spec]);
    expect(calls.filter((c) => c.op === 'dropIndex').map((c) => c.args[0])).toEqual(['old_1__id_-1']);
    const other = fakeStore(2, existing);
    await other.store.ensureCollections([{ ...spec, extendInPlace: false }]);
    expect(other.calls.filter((c) => c.op === 'dropIndex' || c.op === 'indexes')).toEqual([]);
  });

  it('every hot list query (handlers as they are) sorts on the keys of one of its indexes, tie-breaker included: no blocking sort', async () => {
    const specs = new Map(hotCollections.map((c) => [c.name, c]));
    const finds = (await recordHotQueries()).filter((q) => q.kind === 'find');
    expect(finds.length).toBeGreaterThanOrEqual(30);
    const unserved = finds.flatMap((q) => {
      if (q.kind !== 'find' || !q.query.sort) return [];
      const spec = specs.get(q.collection);
      return spec && servedBy(spec, q.query.filter, withTieBreaker(q.query.sort)) ? [] : [`${q.label}: ${q.collection} ${JSON.stringify(q.query.sort)}`];
    });
    expect(unserved).toEqual([]);
  });

  it('every hot aggregate (statistics, coverage) matches on the leading fields of an index', async () => {
    const specs = new Map(hotCollections.map((c) => [c.name, c]));
    const aggregates = (await recordHotQueries()).filter((q) => q.kind === 'aggregate');
    expect(aggregates.length).toBeGreaterThan(2);
    const unindexed = aggregates.flatMap((q) => {
      const spec = specs.get(q.collection);
      const eq = equalityFields(q.query.filter);
      const led = spec?.indexes?.some((ix) => eq.has(ix.fields[0]![0]));
      return led ? [] : [`${q.label}: ${q.collection} ${JSON.stringify(q.query.filter)}`];
    });
    expect(unindexed).toEqual([]);
    expect(aggregatePipeline({ filter: { user_id: 'u' }, groupBy: ['day'], sum: ['v'] })[0]).toEqual({ $match: { user_id: 'u' } });
  });

  it('a next page is bounded on its leading sort key from the cursor: $gte ascending, not-greater descending (nulls stay reachable), nothing from an ascending null', () => {
    const asc = findCommand({ filter: { user_id: 'u' }, sort: [['start_date', 1], ['id', 1]], after: ['2026-01-01', 'r1', 'u:r1'], limit: 51 })!;
    const and = (asc.filter as { $and: unknown[] }).$and;
    expect(and[0]).toEqual({ user_id: 'u' });
    expect(and[1]).toEqual({ start_date: { $gte: '2026-01-01' } });
    expect(and[2]).toHaveProperty('$or');
    expect([...asc.sort]).toEqual([['start_date', 1], ['id', 1], ['_id', 1]]);
    expect(asc.limit).toBe(51);
    const desc = findCommand({ filter: { log: 'l' }, sort: [['seq', -1]], after: [10, 'a'] })!;
    expect((desc.filter as { $and: unknown[] }).$and[1]).toEqual({ seq: { $not: { $gt: 10 } } });
    const fromNull = findCommand({ sort: [['t', 1]], after: [null, 'a'] })!;
    expect((fromNull.filter as { $and: unknown[] }).$and).toHaveLength(1);
    const descNull = findCommand({ sort: [['t', -1]], after: [null, 'a'] })!;
    expect((descNull.filter as { $and: unknown[] }).$and[0]).toEqual({ t: null });
    expect(findCommand({ limit: 0 })).toBeNull();
  });

  it('applyBatch tags every write with the epoch of its claim; an update first removes an earlier epoch stray, and no change overwrites a later epoch', async () => {
    const { calls, store } = fakeStore(4);
    await store.applyBatch({
      projection: 'p',
      expectedPosition: 0,
      position: 20,
      mode: 'rebuilding',
      lastEventAt: null,
      changes: [
        { op: 'put', collection: 'c', doc: { _id: 'a', v: 1 }, position: 10, index: 0 },
        { op: 'update', collection: 'c', id: 'b', upsert: true, setOnInsert: { k: 1 }, inc: { n: 1 }, position: 20, index: 0 },
        { op: 'delete', collection: 'c', id: 'z', position: 20, index: 1 },
      ],
    });
    const ops = calls.find((c) => c.op === 'bulkWrite')!.args[0] as Record<string, { filter: Record<string, unknown>; replacement?: Record<string, unknown>; update?: Record<string, Record<string, unknown>> }>[];
    expect(ops[0]!.replaceOne!.filter).toEqual({ _id: 'a', _e: { $not: { $gt: 4 } } });
    expect(ops[0]!.replaceOne!.replacement).toEqual({ _id: 'a', v: 1, _p: 10, _i: 0, _e: 4 });
    expect(ops[1]!.deleteOne!.filter).toEqual({ _id: 'b', _e: { $lt: 4 } });
    expect(ops[2]!.updateOne!.update!.$setOnInsert).toEqual({ k: 1, _e: 4 });
    expect(ops[3]!.updateOne!.filter).toMatchObject({ _id: 'b', _e: { $not: { $gt: 4 } } });
    expect(ops[3]!.updateOne!.update!.$set).toEqual({ _p: 20, _i: 0, _e: 4 });
    expect(ops[4]!.deleteOne!.filter).toEqual({ _id: 'z', _e: { $not: { $gt: 4 } } });
  });

  it('no collection belongs to two projections (epochs and rebuild drops are per projection)', () => {
    const owners = new Map<string, string[]>();
    for (const p of projections) for (const c of p.collections) owners.set(c.name, [...(owners.get(c.name) ?? []), p.name]);
    expect([...owners].filter(([, o]) => o.length > 1)).toEqual([]);
  });

  it('a rebuild start raises the epoch; its end does not', async () => {
    const { calls, store } = fakeStore();
    await store.setCheckpoint('p', 0, 'rebuilding');
    await store.setCheckpoint('p', 99, 'live');
    const updates = calls.filter((c) => c.op === 'updateOne').map((c) => c.args[1] as Record<string, unknown>);
    expect(updates[0]!.$inc).toEqual({ epoch: 1 });
    expect(updates[1]!.$inc).toBeUndefined();
  });

  it('a collection with expireAt gets a TTL index, and writes keep a BSON date beside the ISO field (never returned)', async () => {
    const { calls, store } = fakeStore();
    await store.ensureCollections([{ name: 'keys', indexes: [{ fields: [['expires_at', 1]] }], expireAt: 'expires_at' }]);
    const ttl = calls.filter((c) => c.op === 'createIndex').at(-1)!;
    expect(ttl.args).toEqual([{ _expires: 1 }, { expireAfterSeconds: 0 }]);
    await store.applyChanges([
      { op: 'put', collection: 'keys', doc: { _id: 'a', expires_at: '2026-01-02T00:00:00.000Z' } },
      { op: 'update', collection: 'keys', id: 'b', upsert: true, setOnInsert: { expires_at: '2026-01-03T00:00:00.000Z' } },
    ]);
    const ops = calls.filter((c) => c.op === 'bulkWrite').flatMap((c) => c.args[0] as Record<string, { replacement?: Record<string, unknown>; update?: Record<string, Record<string, unknown>> }>[]);
    expect(ops[0]!.replaceOne!.replacement!._expires).toEqual(new Date('2026-01-02T00:00:00.000Z'));
    expect(ops[1]!.updateOne!.update!.$setOnInsert!._expires).toEqual(new Date('2026-01-03T00:00:00.000Z'));
    await store.find('keys', {});
    expect((calls.find((c) => c.op === 'find')!.args[1] as { projection: Record<string, number> }).projection).toMatchObject({ _expires: 0, _e: 0, _p: 0, _i: 0 });
  });

  it('updateIf is one updateOne whose filter carries the expected values (the compare-and-set), with the expiry kept in step; it answers whether a document matched', async () => {
    const { calls, store } = fakeStore();
    await store.ensureCollections([{ name: 'keys', expireAt: 'expires_at' }]);
    calls.length = 0;
    const written = await store.updateIf('keys', 'k', { owner: 'a', status: 'running' }, { owner: 'b', expires_at: '2026-01-03T00:00:00.000Z' });
    expect(written).toBe(true);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ coll: 'keys', op: 'updateOne' });
    expect(calls[0]!.args[0]).toEqual({ _id: 'k', owner: 'a', status: 'running' });
    expect(calls[0]!.args[1]).toEqual({ $set: { owner: 'b', expires_at: '2026-01-03T00:00:00.000Z', _expires: new Date('2026-01-03T00:00:00.000Z') } });
    await expect(store.updateIf('keys', 'k', { 'owner; drop': 'a' }, { owner: 'b' })).rejects.toThrow(/invalid field/);
  });
});
