import { randomUUID } from 'node:crypto';
import { MongoClient, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { aggregatePipeline, findCommand } from '../../src/readstore/mongoQuery.js';
import { MongoReadStore } from '../../src/readstore/mongoReadStore.js';
import type { Filter, Scalar } from '../../src/readstore/readStore.js';
import { hotCollections, recordHotQueries, type RecordedQuery } from './indexedQueries.js';

/**
 * The plans MongoDB makes of the hot queries, asserted with explain(): each list page (first and
 * next, both views of the records) is an index scan with no blocking SORT stage, and the
 * statistics and coverage aggregations start from an index scan, never a collection scan. The
 * queries come from the real handlers (indexedQueries.ts). Runs wherever MongoDB is reachable.
 */
const url = inject('mongodbUrl');

/** Every stage name of the winning plans in an explain output (classic and slot-based engines alike). */
function winningStages(explain: unknown): string[] {
  const stages: string[] = [];
  const walkPlan = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (typeof n.stage === 'string') stages.push(n.stage);
    for (const key of ['queryPlan', 'inputStage']) walkPlan(n[key]);
    if (Array.isArray(n.inputStages)) n.inputStages.forEach(walkPlan);
  };
  const findWinning = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(findWinning);
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === 'winningPlan') walkPlan(v);
      else if (k !== 'rejectedPlans') findWinning(v);
    }
  };
  findWinning(explain);
  return stages;
}

/** A value of the type the query compares a field with, so seeded documents look like real ones. */
function sample(cond: unknown, i: number): Scalar {
  if (cond === null || typeof cond !== 'object') return cond as Scalar;
  const c = cond as Record<string, unknown>;
  const v = c.$eq ?? c.$gte ?? c.$gt ?? c.$lt ?? c.$lte ?? (Array.isArray(c.$in) ? c.$in[0] : undefined);
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return v + i;
  return null;
}

/** Documents that match a query's equality fields and spread over its sort keys. */
function seedFor(q: Extract<RecordedQuery, { kind: 'find' }>, n: number): Document[] {
  const docs: Document[] = [];
  for (let i = 0; i < n; i++) {
    const doc: Document = { _id: `${q.collection}-${randomUUID()}` };
    for (const [f, cond] of Object.entries((q.query.filter ?? {}) as Filter)) if (!f.includes('.')) doc[f] = sample(cond, 0);
    for (const [f] of q.query.sort ?? []) {
      if (f === '_id') continue;
      const current = doc[f];
      doc[f] = typeof current === 'string' && /^\d{4}-/.test(current) ? new Date(Date.parse('2026-01-01') + i * 60_000).toISOString() : typeof current === 'string' ? `${current}-${i}` : i;
    }
    if ('hidden' in doc) doc.hidden = i % 5 === 0;
    docs.push(doc);
  }
  return docs;
}

if (!url) {
  describe.skip('MongoDB query plans (explain): no Docker engine or MONGODB_URL', () => it('skipped', () => {}));
} else {
  describe('MongoDB query plans of the hot queries (explain)', () => {
    const database = `wellstream_plans_${randomUUID().slice(0, 8)}`;
    let store: MongoReadStore;
    let client: MongoClient;
    let queries: RecordedQuery[];

    beforeAll(async () => {
      store = await MongoReadStore.connect({ url, database });
      client = await MongoClient.connect(url);
      await store.ensureCollections(hotCollections);
      queries = await recordHotQueries();
      const seeded = new Set<string>();
      for (const q of queries) {
        if (q.kind !== 'find' || seeded.has(q.label.replace(/ \(.*$/, ''))) continue;
        seeded.add(q.label.replace(/ \(.*$/, ''));
        await client.db(database).collection(q.collection).insertMany(seedFor(q, 300) as never[]);
      }
    });
    afterAll(async () => {
      await client?.db(database).dropDatabase();
      await client?.close();
      await store?.close();
    });

    it('every list page, first and next, is an index scan with no blocking sort', async () => {
      const bad: string[] = [];
      for (const q of queries) {
        if (q.kind !== 'find') continue;
        const command = findCommand(q.query);
        if (!command) continue;
        const cursor = client.db(database).collection(q.collection).find(command.filter, { projection: command.projection, sort: command.sort });
        if (command.limit !== undefined) cursor.limit(command.limit);
        const stages = winningStages(await cursor.explain('queryPlanner'));
        if (!stages.includes('IXSCAN') || stages.includes('SORT') || stages.includes('COLLSCAN')) bad.push(`${q.label}: ${stages.join(' < ')}`);
      }
      expect(bad).toEqual([]);
    });

    it('statistics and coverage aggregations start from an index scan, never a collection scan', async () => {
      const bad: string[] = [];
      for (const q of queries) {
        if (q.kind !== 'aggregate') continue;
        const explain = await client.db(database).collection(q.collection).aggregate(aggregatePipeline(q.query)).explain('queryPlanner');
        const stages = winningStages(explain);
        if (!stages.includes('IXSCAN') || stages.includes('COLLSCAN')) bad.push(`${q.label}: ${stages.join(' < ')}`);
      }
      expect(bad).toEqual([]);
    });

    it('GridFS finds a namespace (user erasure) by its index', async () => {
      const { GridFsRawStore } = await import('../../src/rawstore/gridFsRawStore.js');
      const raw = await GridFsRawStore.connect(url, database);
      await raw.put(Buffer.from('x'), 'u1');
      const explain = await client.db(database).collection('raw.files').find({ 'metadata.namespace': 'u1' }).explain('queryPlanner');
      expect(winningStages(explain)).toContain('IXSCAN');
      await raw.close();
    });
  });
}
