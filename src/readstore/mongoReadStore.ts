import { MongoClient, MongoServerError, type AnyBulkWriteOperation, type Collection, type Db, type Document } from 'mongodb';
import { fenceClaim, fenceHeld, MongoLeases } from './mongoLeases.js';
import type { LeaseStore } from './leases.js';
import {
  assertForward,
  CheckpointMismatchError,
  TIE_BREAKER,
  withTieBreaker,
  type AggregateQuery,
  type AggregateRow,
  type ApplyBatch,
  type Change,
  type Checkpoint,
  type CollectionSpec,
  type EnsureOptions,
  type Doc,
  type Filter,
  type FindQuery,
  type ReadStore,
  type Scalar,
  type SortSpec,
  type UpdateChange,
} from './readStore.js';

type CheckpointDoc = {
  _id: string;
  position: number;
  status: Checkpoint['status'];
  updatedAt: string;
  lastEventAt: string | null;
  /** Set while a batch towards this position is being applied. */
  pendingTo?: number;
  /** Highest lease generation that claimed this checkpoint (src/readstore/mongoLeases.ts). */
  fence?: number;
};

/** Stored documents: the caller's fields plus the replay guard's `_p`/`_i`. */
interface StoredDoc extends Document {
  _id: string;
}

/** Position and index of the change that last wrote a document (see applyBatch). */
type Tag = { position: number; index: number };

type Step = { collection: string; op: AnyBulkWriteOperation<StoredDoc> };

const CHECKPOINTS = '_checkpoints';
const CHUNK = 1000;
/** Bookkeeping fields of the replay guard; never returned to callers. */
const HIDDEN = { _p: 0, _i: 0 } as const;
const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$exists']);
const DUPLICATE_KEY = 11000;
const NAMESPACE_NOT_FOUND = 26;
const NAMESPACE_EXISTS = 48;

/**
 * MongoDB read-model store. Collections and filters map 1:1 onto MongoDB's; the part that
 * differs from the embedded store is applyBatch, which cannot be atomic on a standalone server
 * (no multi-document transactions) and is made idempotent under replay instead:
 *
 * 1. Claim: the checkpoint must still be at `expectedPosition` in `mode`; it records
 *    `pendingTo`, so that a rebuild (setCheckpoint clears it) or a competing runner revokes
 *    the claim and the advance below fails.
 * 2. Apply: every document written by a batch carries `_p`/`_i`, the position and index of the
 *    last change that wrote it. Updates only match documents whose tag is before their own, so
 *    on a replay after a crash the changes that already reached a document are skipped. That
 *    is needed for every update, not just $inc/$min/$max: a re-applied $set would rewind the tag
 *    and let a later $inc apply twice. Puts and deletes need no guard: they reset the document
 *    (and its tag), and every later change then re-applies in order, as it did the first time.
 *    deleteMany is guarded too, so that it spares documents that already moved past it.
 * 3. Advance: the checkpoint moves to `position` only while the claim still holds.
 *
 * A replay re-reads the events from the old checkpoint, so the stored state converges to the
 * one a single run produces. Known limit: a deleteMany whose filter reads a field that changes
 * within the replayed range may see a document that the replay re-created from scratch (after
 * it was deleted) in a different state than the first run saw; filters on immutable fields
 * (owner ids) are exact.
 */
export class MongoReadStore implements ReadStore {
  readonly kind = 'mongodb' as const;
  private readonly checkpoints: Collection<CheckpointDoc>;

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {
    this.checkpoints = db.collection<CheckpointDoc>(CHECKPOINTS);
  }

  static async connect({ url, database }: { url: string; database: string }): Promise<MongoReadStore> {
    // Undefined members must disappear, as they do in the embedded store's JSON, not turn into null.
    const client = await MongoClient.connect(url, { ignoreUndefined: true });
    return new MongoReadStore(client, client.db(database));
  }

  /** Documents have no fixed shape here: nothing is ever recreated. */
  async ensureCollections(specs: readonly CollectionSpec[], options: EnsureOptions = {}): Promise<string[]> {
    for (const spec of specs) {
      const coll = this.coll(spec.name);
      const indexes = options.indexes === false ? [] : (spec.indexes ?? []).filter((ix) => !(ix.fields.length === 1 && ix.fields[0]![0] === '_id'));
      if (indexes.length === 0) {
        await this.db.createCollection(spec.name).catch((err: unknown) => {
          if (!hasCode(err, NAMESPACE_EXISTS)) throw err;
        });
        continue;
      }
      for (const index of indexes) {
        await coll.createIndex(new Map(index.fields.map(([f, d]) => [checkField(f), d])), index.unique ? { unique: true } : {});
      }
    }
    return [];
  }

  async dropCollections(names: readonly string[]): Promise<void> {
    for (const name of names) {
      checkCollection(name);
      await this.db.dropCollection(name).catch((err: unknown) => {
        if (!hasCode(err, NAMESPACE_NOT_FOUND)) throw err;
      });
    }
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    return (await this.coll(collection).findOne({ _id: id }, { projection: HIDDEN })) as T | null;
  }

  async find<T extends Doc = Doc>(collection: string, query: FindQuery = {}): Promise<T[]> {
    const coll = this.coll(collection);
    const sort = withTieBreaker(query.sort);
    let filter = toMongoFilter(query.filter);
    if (query.after) {
      const keyset = keysetFilter(sort, query.after);
      if (!keyset) return [];
      filter = Object.keys(filter).length ? { $and: [filter, keyset] } : keyset;
    }
    // MongoDB reads a limit of 0 as "no limit".
    if (query.limit === 0) return [];
    const projection = query.fields ? Object.fromEntries([['_id', 1], ...query.fields.map((f) => [checkField(f), 1])]) : HIDDEN;
    const cursor = coll.find(filter, { projection, sort: new Map(sort.map(([f, d]) => [checkField(f), d])) });
    if (query.limit !== undefined && query.limit > 0) cursor.limit(query.limit);
    return (await cursor.toArray()) as unknown as T[];
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    return this.coll(collection).countDocuments(toMongoFilter(filter));
  }

  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    const id: Document = {};
    query.groupBy.forEach((f, i) => (id[`g${i}`] = `$${checkField(f)}`));
    const group: Document = { _id: id, n: { $sum: 1 } };
    (query.sum ?? []).forEach((f, i) => (group[`s${i}`] = { $sum: `$${checkField(f)}` }));
    (query.min ?? []).forEach((f, i) => (group[`lo${i}`] = { $min: `$${checkField(f)}` }));
    (query.max ?? []).forEach((f, i) => (group[`hi${i}`] = { $max: `$${checkField(f)}` }));
    const sort: Document = {};
    query.groupBy.forEach((_, i) => (sort[`_id.g${i}`] = 1));
    const pipeline: Document[] = [{ $match: toMongoFilter(query.filter) }, { $group: group }];
    if (query.groupBy.length) pipeline.push({ $sort: sort });
    if (query.limit !== undefined) pipeline.push({ $limit: query.limit });
    const rows = await this.coll(collection).aggregate(pipeline, { allowDiskUse: true }).toArray();
    return rows.map((r) => ({
      group: Object.fromEntries(query.groupBy.map((f, i) => [f, (r._id as Document)[`g${i}`] ?? null])),
      count: Number(r.n),
      sum: Object.fromEntries((query.sum ?? []).map((f, i) => [f, Number(r[`s${i}`] ?? 0)])),
      min: Object.fromEntries((query.min ?? []).map((f, i) => [f, (r[`lo${i}`] as Scalar) ?? null])),
      max: Object.fromEntries((query.max ?? []).map((f, i) => [f, (r[`hi${i}`] as Scalar) ?? null])),
    }));
  }

  async applyChanges(changes: readonly Change[]): Promise<void> {
    await this.run(changes.flatMap((c) => opsFor(c).map((op) => ({ collection: c.collection, op }))));
  }

  async applyBatch(batch: ApplyBatch): Promise<void> {
    assertForward(batch);
    await this.claim(batch);
    const steps = batch.changes.flatMap((c) => opsFor(c, { position: c.position, index: c.index }).map((op) => ({ collection: c.collection, op })));
    await this.run(steps, () => this.assertClaim(batch));
    const advanced = await this.checkpoints.updateOne(
      { _id: batch.projection, position: batch.expectedPosition, status: batch.mode, pendingTo: batch.position, ...fenceHeld(batch.fence) },
      {
        $set: {
          position: batch.position,
          updatedAt: new Date().toISOString(),
          ...(batch.lastEventAt !== null ? { lastEventAt: batch.lastEventAt } : {}),
        },
        $unset: { pendingTo: '' },
      },
    );
    if (advanced.matchedCount !== 1) throw await this.mismatch(batch);
  }

  async getCheckpoint(projection: string): Promise<Checkpoint | null> {
    const doc = await this.checkpoints.findOne({ _id: projection });
    return doc ? toCheckpoint(doc) : null;
  }

  async listCheckpoints(): Promise<Checkpoint[]> {
    const docs = await this.checkpoints.find({}, { sort: { _id: 1 } }).toArray();
    return docs.map(toCheckpoint);
  }

  async setCheckpoint(projection: string, position: number, status: Checkpoint['status']): Promise<void> {
    const updatedAt = new Date().toISOString();
    await this.checkpoints.updateOne(
      { _id: projection },
      position === 0
        ? { $set: { position, status, updatedAt, lastEventAt: null }, $unset: { pendingTo: '' } }
        : { $set: { position, status, updatedAt }, $setOnInsert: { lastEventAt: null }, $unset: { pendingTo: '' } },
      { upsert: true },
    );
  }

  leases(): LeaseStore {
    return new MongoLeases(this.db);
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  private async claim(batch: ApplyBatch): Promise<void> {
    const fence = fenceClaim(batch.fence);
    const filter = { _id: batch.projection, position: batch.expectedPosition, status: batch.mode, ...fence.filter };
    const take = async () => (await this.checkpoints.updateOne(filter, { $set: { pendingTo: batch.position }, ...fence.update })).matchedCount === 1;
    if (await take()) return;
    // A projection without a checkpoint starts live at 0, as on the embedded store.
    if (batch.expectedPosition === 0 && batch.mode === 'live') {
      try {
        await this.checkpoints.insertOne({
          _id: batch.projection,
          position: 0,
          status: 'live',
          updatedAt: new Date().toISOString(),
          lastEventAt: null,
          pendingTo: batch.position,
          ...(batch.fence ? { fence: batch.fence.generation } : {}),
        });
        return;
      } catch (err) {
        if (!hasCode(err, DUPLICATE_KEY)) throw err;
        if (await take()) return;
      }
    }
    throw await this.mismatch(batch);
  }

  /** Stops a batch whose claim was revoked (a rebuild started) before it writes much more. */
  private async assertClaim(batch: ApplyBatch): Promise<void> {
    const held = await this.checkpoints.findOne(
      { _id: batch.projection, position: batch.expectedPosition, status: batch.mode, pendingTo: batch.position },
      { projection: { _id: 1 } },
    );
    if (!held) throw await this.mismatch(batch);
  }

  private async mismatch(batch: ApplyBatch): Promise<CheckpointMismatchError> {
    const cp = await this.checkpoints.findOne({ _id: batch.projection });
    return new CheckpointMismatchError(batch.projection, batch.expectedPosition, cp?.position ?? null, cp?.status ?? 'live');
  }

  /**
   * Ordered bulk writes, one collection at a time: only the order of writes to the same document
   * matters, and grouping keeps interleaved collections from costing a round trip per change.
   */
  private async run(steps: readonly Step[], beforeNextChunk?: () => Promise<void>): Promise<void> {
    const byCollection = new Map<string, AnyBulkWriteOperation<StoredDoc>[]>();
    for (const s of steps) {
      const ops = byCollection.get(s.collection);
      if (ops) ops.push(s.op);
      else byCollection.set(s.collection, [s.op]);
    }
    let first = true;
    for (const [name, ops] of byCollection) {
      const coll = this.coll(name);
      for (let i = 0; i < ops.length; i += CHUNK) {
        if (!first) await beforeNextChunk?.();
        first = false;
        await coll.bulkWrite(ops.slice(i, i + CHUNK), { ordered: true });
      }
    }
  }

  private coll(name: string): Collection<StoredDoc> {
    return this.db.collection<StoredDoc>(checkCollection(name));
  }
}

function opsFor(c: Change, tag?: Tag): AnyBulkWriteOperation<StoredDoc>[] {
  switch (c.op) {
    case 'put':
      return [
        {
          replaceOne: {
            filter: { _id: c.doc._id },
            replacement: tag ? { ...c.doc, _p: tag.position, _i: tag.index } : c.doc,
            upsert: true,
          },
        },
      ];
    case 'update':
      return updateOps(c, tag);
    case 'delete':
      return [{ deleteOne: { filter: { _id: c.id } } }];
    case 'deleteMany': {
      const filter = toMongoFilter(c.filter);
      return [{ deleteMany: { filter: tag ? { $and: [filter, notYetApplied(tag)] } : filter } }];
    }
  }
}

/**
 * One upserting updateOne when possible. Tagged updates cannot upsert (a guard that does not
 * match an existing document would make the upsert insert a duplicate `_id`), and MongoDB
 * refuses $setOnInsert on a path another operator of the same update touches; both cases first
 * make sure the document exists, then update it without upsert.
 */
function updateOps(c: UpdateChange, tag?: Tag): AnyBulkWriteOperation<StoredDoc>[] {
  const filter = { _id: c.id };
  const set: Document = { ...c.set };
  if (tag) {
    set._p = tag.position;
    set._i = tag.index;
  }
  const update: Document = {};
  if (nonEmpty(set)) update.$set = set;
  if (c.unset?.length) update.$unset = Object.fromEntries(c.unset.map((k) => [k, '']));
  if (nonEmpty(c.inc)) update.$inc = c.inc;
  if (nonEmpty(c.min)) update.$min = c.min;
  if (nonEmpty(c.max)) update.$max = c.max;
  const onInsert: Document = c.upsert ? { ...c.setOnInsert } : {};
  const touched = [set, c.inc ?? {}, c.min ?? {}, c.max ?? {}].flatMap((o) => Object.keys(o)).concat(c.unset ?? []);
  const clash = Object.keys(onInsert).some((p) => touched.some((q) => overlaps(p, q)));

  if (!tag && !clash) {
    if (nonEmpty(onInsert)) update.$setOnInsert = onInsert;
    // Empty operands are no-ops since MongoDB 5.0; with upsert this still creates `{ _id }`.
    if (!nonEmpty(update)) return c.upsert ? [{ updateOne: { filter, update: { $setOnInsert: {} }, upsert: true } }] : [];
    return [{ updateOne: { filter, update, upsert: c.upsert === true } }];
  }
  const ops: AnyBulkWriteOperation<StoredDoc>[] = [];
  if (c.upsert) ops.push({ updateOne: { filter, update: { $setOnInsert: insertedFields(onInsert, c.set) }, upsert: true } });
  ops.push({ updateOne: { filter: tag ? { ...filter, ...notYetApplied(tag) } : filter, update } });
  return ops;
}

/**
 * The insert step also writes the $set fields (the update step writes them again), so that a
 * new document reaches unique indexes with the same fields a single upsert would give it.
 */
function insertedFields(onInsert: Document, set: Record<string, unknown> | undefined): Document {
  const fields: Document = { ...onInsert };
  const own = Object.keys(onInsert);
  for (const [k, v] of Object.entries(set ?? {})) {
    if (!own.some((p) => p !== k && overlaps(p, k))) fields[k] = v;
  }
  return fields;
}

/** Matches documents no change at or after `tag` has written yet. */
function notYetApplied({ position, index }: Tag): Document {
  return { $or: [{ _p: { $exists: false } }, { _p: { $lt: position } }, { _p: position, _i: { $lt: index } }] };
}

function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

function nonEmpty(o: object | undefined): o is object {
  return o !== undefined && Object.keys(o).length > 0;
}

/**
 * Copies only the supported operators: an unknown one would otherwise be sent to the server
 * verbatim, and an empty condition object would mean "equals {}" instead of "no condition".
 */
function toMongoFilter(filter: Filter | undefined): Document {
  const out: Document = {};
  for (const [field, cond] of Object.entries(filter ?? {})) {
    checkField(field);
    if (cond === undefined) continue;
    if (cond === null || typeof cond !== 'object') {
      out[field] = cond;
      continue;
    }
    const ops: Document = {};
    for (const [op, v] of Object.entries(cond)) {
      if (!OPERATORS.has(op)) throw new Error(`unsupported filter operator ${op} on ${field}`);
      if (v !== undefined) ops[op] = Array.isArray(v) ? [...v] : v;
    }
    if (nonEmpty(ops)) out[field] = ops;
  }
  return out;
}

/**
 * Documents strictly after `after` in `sort` order, or null when none can be. Range operators
 * compare within one BSON type only, while null (and a missing field) sorts before every value:
 * `$gt: null` would match nothing, and `$lt: v` would never reach the nulls at the end of a
 * descending order.
 */
function keysetFilter(sort: SortSpec, after: readonly Scalar[]): Document | null {
  if (after.length !== sort.length) throw new Error('cursor does not match the sort');
  const branches: Document[] = [];
  const prefix: Document = {};
  for (let i = 0; i < sort.length; i++) {
    const [field, dir] = sort[i]!;
    const value = after[i] as Scalar;
    checkField(field);
    const conds: (Document | null)[] = [];
    if (value === null) {
      if (dir === 1) conds.push({ $ne: null });
    } else {
      conds.push(dir === 1 ? { $gt: value } : { $lt: value });
      if (dir === -1 && field !== TIE_BREAKER) conds.push(null);
    }
    for (const cond of conds) branches.push({ ...prefix, [field]: cond });
    prefix[field] = value;
  }
  return branches.length ? { $or: branches } : null;
}

function toCheckpoint(doc: CheckpointDoc): Checkpoint {
  return { projection: doc._id, position: doc.position, status: doc.status, updatedAt: doc.updatedAt, lastEventAt: doc.lastEventAt ?? null };
}

/** Same names as the embedded store accepts; it also keeps `_checkpoints` and system collections out of reach. */
function checkCollection(name: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid collection name ${name}`);
  return name;
}

function checkField(field: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(field)) throw new Error(`invalid field path ${field}`);
  return field;
}

function hasCode(err: unknown, code: number): boolean {
  return err instanceof MongoServerError && err.code === code;
}
