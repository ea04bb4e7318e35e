import { Aggregator, Query, find, update } from 'mingo';
import type { Db } from 'mongodb';

/**
 * A stand-in for the few MongoDB collection calls the work queue and the record ledger make, evaluated in memory by
 * mingo (MongoDB's query and update language in JavaScript), so the queue's MongoDB adapter runs
 * its contract here without a server. What matters for the contract is kept as the server does
 * it: each single-document write is atomic (it runs in one synchronous step after a turn of the
 * event loop, so concurrent calls interleave between writes, never within one), and unique
 * indexes, partial ones included, refuse a duplicate with code 11000 and change nothing. Every
 * call is recorded for the request-shape tests. It is not a server: the real suite runs where one
 * is reachable.
 */
export type Call = { collection: string; op: string; args: unknown[] };
type Doc = Record<string, unknown> & { _id: unknown };
type IndexDef = { keys: Record<string, number>; options: { unique?: boolean; partialFilterExpression?: Record<string, unknown>; name?: string; expireAfterSeconds?: number } };

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const clone = <T>(value: T): T => structuredClone(value);

class DuplicateKey extends Error {
  readonly code = 11000;
}

export class MemoryCollection {
  readonly docs = new Map<unknown, Doc>();
  readonly indexes: IndexDef[] = [];

  constructor(
    private readonly name: string,
    private readonly calls: Call[],
  ) {}

  private record(op: string, args: unknown[]): void {
    this.calls.push({ collection: this.name, op, args: clone(args) });
  }

  async createIndex(keys: Record<string, number>, options: IndexDef['options'] = {}): Promise<string> {
    this.record('createIndex', [keys, options]);
    if (!this.indexes.some((ix) => ix.options.name !== undefined && ix.options.name === options.name)) this.indexes.push({ keys, options });
    return options.name ?? Object.keys(keys).join('_');
  }

  async insertOne(doc: Doc): Promise<{ insertedId: unknown }> {
    this.record('insertOne', [doc]);
    await turn();
    if (this.docs.has(doc._id)) throw new DuplicateKey(`duplicate _id ${String(doc._id)}`);
    const stored = clone(doc);
    this.checkUnique(stored);
    this.docs.set(stored._id, stored);
    return { insertedId: doc._id };
  }

  /** Unordered (`ordered: false`): every document a unique index allows is stored; the others fail together at the end, as the driver's bulk write error does. */
  async insertMany(docs: Doc[], options: { ordered?: boolean } = {}): Promise<{ insertedCount: number }> {
    this.record('insertMany', [docs, options]);
    await turn();
    const writeErrors: { index: number; code: number; errmsg: string }[] = [];
    for (const [index, doc] of docs.entries()) {
      try {
        if (this.docs.has(doc._id)) throw new DuplicateKey(`duplicate _id ${String(doc._id)}`);
        const stored = clone(doc);
        this.checkUnique(stored);
        this.docs.set(stored._id, stored);
      } catch (err) {
        if (!(err instanceof DuplicateKey)) throw err;
        writeErrors.push({ index, code: err.code, errmsg: err.message });
        if (options.ordered !== false) break;
      }
    }
    if (writeErrors.length > 0) throw Object.assign(new Error('bulk write failed'), { code: 11000, writeErrors });
    return { insertedCount: docs.length };
  }

  find(filter: Record<string, unknown>, options: { projection?: Record<string, 0 | 1> } = {}) {
    this.record('find', [filter, options]);
    let sort: Record<string, 1 | -1> | undefined;
    let limit: number | undefined;
    const cursor = {
      sort: (spec: Record<string, 1 | -1>) => {
        sort = spec;
        this.calls[this.calls.length - 1]!.args.push({ sort: clone(spec) });
        return cursor;
      },
      limit: (n: number) => {
        limit = n;
        return cursor;
      },
      toArray: async () => {
        await turn();
        let c = find([...this.docs.values()], filter, options.projection);
        if (sort) c = c.sort(sort);
        if (limit !== undefined) c = c.limit(limit);
        return clone(c.all());
      },
    };
    return cursor;
  }

  async findOne(filter: Record<string, unknown>): Promise<Doc | null> {
    this.record('findOne', [filter]);
    await turn();
    return clone(this.first(filter) ?? null);
  }

  async findOneAndUpdate(filter: Record<string, unknown>, modifier: Record<string, unknown>, options: { returnDocument?: 'before' | 'after' } = {}): Promise<Doc | null> {
    this.record('findOneAndUpdate', [filter, modifier, options]);
    await turn();
    const doc = this.first(filter);
    if (!doc) return null;
    const after = this.apply(doc, modifier);
    return clone(options.returnDocument === 'after' ? after : doc);
  }

  async updateOne(filter: Record<string, unknown>, modifier: Record<string, unknown>): Promise<{ matchedCount: number; modifiedCount: number }> {
    this.record('updateOne', [filter, modifier]);
    await turn();
    const doc = this.first(filter);
    if (!doc) return { matchedCount: 0, modifiedCount: 0 };
    this.apply(doc, modifier);
    return { matchedCount: 1, modifiedCount: 1 };
  }

  async updateMany(filter: Record<string, unknown>, modifier: Record<string, unknown>): Promise<{ matchedCount: number; modifiedCount: number }> {
    this.record('updateMany', [filter, modifier]);
    await turn();
    const query = new Query(filter);
    let matchedCount = 0;
    for (const doc of [...this.docs.values()]) {
      if (!query.test(doc)) continue;
      this.apply(doc, modifier);
      matchedCount += 1;
    }
    return { matchedCount, modifiedCount: matchedCount };
  }

  async deleteMany(filter: Record<string, unknown>): Promise<{ deletedCount: number }> {
    this.record('deleteMany', [filter]);
    await turn();
    const query = new Query(filter);
    let deletedCount = 0;
    for (const [id, doc] of this.docs) {
      if (query.test(doc)) {
        this.docs.delete(id);
        deletedCount += 1;
      }
    }
    return { deletedCount };
  }

  aggregate<T>(pipeline: Record<string, unknown>[]) {
    this.record('aggregate', [pipeline]);
    return {
      toArray: async () => {
        await turn();
        return clone(new Aggregator(pipeline).run([...this.docs.values()])) as T[];
      },
    };
  }

  private first(filter: Record<string, unknown>): Doc | undefined {
    const query = new Query(filter);
    for (const doc of this.docs.values()) if (query.test(doc)) return doc;
    return undefined;
  }

  /** Applies an update to a copy; stores it only if every unique index allows it. */
  private apply(doc: Doc, modifier: Record<string, unknown>): Doc {
    const next = clone(doc);
    update(next, modifier);
    this.checkUnique(next);
    this.docs.set(next._id, next);
    return next;
  }

  private checkUnique(doc: Doc): void {
    for (const ix of this.indexes) {
      if (!ix.options.unique) continue;
      const partial = ix.options.partialFilterExpression ? new Query(ix.options.partialFilterExpression) : null;
      if (partial && !partial.test(doc)) continue;
      const key = JSON.stringify(Object.keys(ix.keys).map((f) => doc[f] ?? null));
      for (const other of this.docs.values()) {
        if (other._id === doc._id || (partial && !partial.test(other))) continue;
        if (JSON.stringify(Object.keys(ix.keys).map((f) => other[f] ?? null)) === key) throw new DuplicateKey(`E11000 duplicate key in ${ix.options.name ?? 'index'}: ${key}`);
      }
    }
  }
}

/** A database of memory collections; `calls` lists what every collection was asked, in order. */
export function memoryMongo(): { db: Db; calls: Call[]; collection(name: string): MemoryCollection } {
  const calls: Call[] = [];
  const collections = new Map<string, MemoryCollection>();
  const collection = (name: string) => {
    let c = collections.get(name);
    if (!c) collections.set(name, (c = new MemoryCollection(name, calls)));
    return c;
  };
  return { db: { collection } as unknown as Db, calls, collection };
}
