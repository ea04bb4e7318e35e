import { MongoServerError, type AnyBulkWriteOperation, type Collection, type Db, type Document } from 'mongodb';
import { acquireMongoClient, type MongoHandle } from './mongoConnection.js';
import { assertLeaseHeld, fenceClaim, fenceHeld, MongoLeases } from './mongoLeases.js';
import type { Fence, LeaseStore } from './leases.js';
import { EXPIRES, opsFor, withExpiry, type StoredDoc } from './mongoChanges.js';
import { aggregatePipeline, checkField, findCommand, HIDDEN, indexKeys, toMongoFilter } from './mongoQuery.js';
import { assertForward, CheckpointMismatchError, type AggregateQuery, type AggregateRow, type ApplyBatch, type Change, type Checkpoint, type CollectionSpec, type EnsureOptions, type Doc, type Filter, type FindQuery, type JoinBytesQuery, type JoinedBytes, type ReadStore, type Scalar } from './readStore.js';

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
  /** Raised by every rebuild start: documents written by batches of an earlier epoch are strays. */
  epoch?: number;
};


type Step = { collection: string; op: AnyBulkWriteOperation<StoredDoc> };

const CHECKPOINTS = '_checkpoints';
const VERSIONS = '_collection_versions';
const CHUNK = 1000;
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
 * one a single run produces.
 *
 * Epochs: a rebuild revokes claims, but a live batch's bulk write already on the wire still lands
 * after the rebuild dropped the collections, tagged with positions far ahead of the rebuild's; the
 * guard would then skip every rebuild change to those documents, leaving them as the stray wrote
 * them. Every rebuild start raises the checkpoint's `epoch`, and documents carry the epoch that
 * wrote them (`_e`): a change of a later epoch removes an earlier epoch's document before it
 * applies (the rebuild replays the stray's event in its turn), and a change of an earlier epoch
 * leaves later documents alone (a stray put fails on the duplicate `_id`, reported as the lost
 * claim it is). Epochs are per projection, which is sound because no collection belongs to two. Known limit: a deleteMany whose filter reads a field that changes
 * within the replayed range may see a document that the replay re-created from scratch (after
 * it was deleted) in a different state than the first run saw; filters on immutable fields
 * (owner ids) are exact.
 */
export class MongoReadStore implements ReadStore {
  readonly kind = 'mongodb' as const;
  private readonly checkpoints: Collection<CheckpointDoc>;
  /** The declared version of each collection that has one (CollectionSpec.version). */
  private readonly versions: Collection<{ _id: string; version: number }>;

  /** Collections whose documents expire, and the field holding their expiry (CollectionSpec.expireAt). */
  private readonly expiring = new Map<string, string>();

  private constructor(
    private readonly handle: MongoHandle,
    private readonly db: Db,
  ) {
    this.checkpoints = db.collection<CheckpointDoc>(CHECKPOINTS);
    this.versions = db.collection<{ _id: string; version: number }>(VERSIONS);
  }

  static async connect({ url, database }: { url: string; database: string }): Promise<MongoReadStore> {
    // One client per process, shared with the raw store (src/readstore/mongoConnection.ts).
    const handle = await acquireMongoClient(url);
    return new MongoReadStore(handle, handle.client.db(database));
  }

  /**
   * Documents have no fixed shape here: only a collection whose declared `version` changed is
   * recreated (its documents were written in an encoding this version cannot read). The version
   * is kept in `_collection_versions`; a collection with documents but no version kept was written
   * before it had one, by an older version.
   */
  async ensureCollections(specs: readonly CollectionSpec[], options: EnsureOptions = {}): Promise<string[]> {
    const reshaped: string[] = [];
    for (const spec of specs) {
      const coll = this.coll(spec.name);
      if (spec.version !== undefined) {
        const stored = await this.versions.findOne({ _id: spec.name });
        const old = stored ? stored.version !== spec.version : (await coll.findOne({}, { projection: { _id: 1 } })) !== null;
        if (old) {
          await this.dropCollections([spec.name]);
          reshaped.push(spec.name);
        }
        if (old || !stored) await this.versions.updateOne({ _id: spec.name }, { $set: { version: spec.version } }, { upsert: true });
      }
      if (spec.expireAt) this.expiring.set(spec.name, checkField(spec.expireAt));
      const indexes = options.indexes === false ? [] : (spec.indexes ?? []).filter((ix) => !(ix.fields.length === 1 && ix.fields[0]![0] === '_id'));
      if (indexes.length === 0 && !(spec.expireAt && options.indexes !== false)) {
        await this.db.createCollection(spec.name).catch((err: unknown) => {
          if (!hasCode(err, NAMESPACE_EXISTS)) throw err;
        });
        continue;
      }
      const wanted = new Set<string>();
      for (const index of indexes) {
        // A unique index keeps its exact keys: with `_id` appended it would constrain nothing.
        const keys = index.unique ? index.fields.map(([f, d]) => [checkField(f), d] as [string, 1 | -1]) : indexKeys(index.fields);
        wanted.add(JSON.stringify(keys));
        await coll.createIndex(new Map(keys), index.unique ? { unique: true } : {});
      }
      // A collection kept through its versions (the delivery log) drops the indexes it no longer
      // declares, as the embedded store does (sqliteTable.ts extensionSql): each costs every write.
      if (spec.extendInPlace && options.indexes !== false) {
        for (const ix of await coll.indexes()) {
          const keys = JSON.stringify(Object.entries(ix.key as Record<string, 1 | -1>));
          if (ix.name !== '_id_' && ix.expireAfterSeconds === undefined && !wanted.has(keys)) await coll.dropIndex(ix.name!);
        }
      }
      // The server removes expired documents itself; the service's own purge stays for the embedded store.
      if (spec.expireAt) await coll.createIndex({ [EXPIRES]: 1 }, { expireAfterSeconds: 0 });
    }
    return reshaped;
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
    const command = findCommand(query);
    if (!command) return [];
    const cursor = this.coll(collection).find(command.filter, { projection: command.projection, sort: command.sort });
    if (command.limit !== undefined) cursor.limit(command.limit);
    return (await cursor.toArray()) as unknown as T[];
  }


  async count(collection: string, filter?: Filter): Promise<number> {
    return this.coll(collection).countDocuments(toMongoFilter(filter));
  }

  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    const rows: AggregateRow[] = [];
    await this.aggregateEach(collection, query, (row) => rows.push(row));
    return rows;
  }

  async aggregateEach(collection: string, query: AggregateQuery, each: (row: AggregateRow) => void): Promise<void> {
    for await (const r of this.coll(collection).aggregate(aggregatePipeline(query), { allowDiskUse: true })) {
      each({
        group: Object.fromEntries(query.groupBy.map((f, i) => [f, (r._id as Document)[`g${i}`] ?? null])),
        count: Number(r.n),
        sum: Object.fromEntries((query.sum ?? []).map((f, i) => [f, Number(r[`s${i}`] ?? 0)])),
        min: Object.fromEntries((query.min ?? []).map((f, i) => [f, (r[`lo${i}`] as Scalar) ?? null])),
        max: Object.fromEntries((query.max ?? []).map((f, i) => [f, (r[`hi${i}`] as Scalar) ?? null])),
      });
    }
  }

  /**
   * The filter's documents read unsorted (the filter's index serves the match; a sort by the group
   * fields would be a blocking sort, no index leading with them) and joined in JavaScript: a `$group`
   * that pushed the values would answer one document per group, which BSON caps at 16 MiB (a long
   * window of a dense series comes near); a find has no such cap.
   */
  async joinBytes(collection: string, query: JoinBytesQuery): Promise<JoinedBytes[]> {
    const projection: Document = { _id: 0, [checkField(query.field)]: 1 };
    for (const f of query.groupBy) projection[checkField(f)] = 1;
    const groups = new Map<string, { group: Record<string, Scalar>; parts: Buffer[] }>();
    for await (const doc of this.coll(collection).find(toMongoFilter(query.filter), { projection })) {
      const bytes = (doc as Document)[query.field];
      if (!(bytes instanceof Uint8Array)) continue;
      const values = query.groupBy.map((f) => ((doc as Document)[f] ?? null) as Scalar);
      const key = JSON.stringify(values);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { group: Object.fromEntries(query.groupBy.map((f, i) => [f, values[i]!])), parts: [] }));
      g.parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    }
    const cmp = (a: Scalar, b: Scalar): number => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);
    return [...groups.values()]
      .sort((a, b) => query.groupBy.reduce((c, f) => c || cmp(a.group[f]!, b.group[f]!), 0))
      .map(({ group, parts }) => ({ group, bytes: Buffer.concat(parts) }));
  }

  async applyChanges(changes: readonly Change[], options?: { fence?: Fence; erasing?: boolean }): Promise<void> {
    const fence = options?.fence;
    const held = fence ? () => assertLeaseHeld(this.db, fence) : undefined;
    await held?.();
    await this.run(changes.flatMap((c) => opsFor(c, undefined, this.expiring.get(c.collection)).map((op) => ({ collection: c.collection, op }))), held);
  }

  async updateIf(collection: string, id: string, expected: Readonly<Record<string, Scalar>>, set: Readonly<Record<string, unknown>>): Promise<boolean> {
    // One updateOne whose filter holds the expected values: MongoDB matches and writes atomically.
    const filter: Document = { _id: id };
    for (const [k, v] of Object.entries(expected)) filter[checkField(k)] = v;
    const result = await this.coll(collection).updateOne(filter, { $set: withExpiry({ ...set }, this.expiring.get(collection)) });
    return result.matchedCount === 1;
  }

  async applyBatch(batch: ApplyBatch): Promise<void> {
    assertForward(batch);
    const epoch = await this.claim(batch);
    const steps = batch.changes.flatMap((c) =>
      opsFor(c, { position: c.position, index: c.index, epoch }, this.expiring.get(c.collection)).map((op) => ({ collection: c.collection, op })),
    );
    try {
      await this.run(steps, () => this.assertClaim(batch));
    } catch (err) {
      // A batch that lost its claim part-way (a rebuild started) can fail on a document of the new epoch.
      if (!(err instanceof CheckpointMismatchError) && !(await this.claimHeld(batch))) throw await this.mismatch(batch);
      throw err;
    }
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
      {
        ...(position === 0
          ? { $set: { position, status, updatedAt, lastEventAt: null }, $unset: { pendingTo: '' } }
          : { $set: { position, status, updatedAt }, $setOnInsert: { lastEventAt: null }, $unset: { pendingTo: '' } }),
        // A rebuild starts a new epoch: whatever a batch of the old one still writes is a stray.
        ...(status === 'rebuilding' ? { $inc: { epoch: 1 } } : {}),
      },
      { upsert: true },
    );
  }

  leases(): LeaseStore {
    return new MongoLeases(this.db);
  }

  async close(): Promise<void> {
    await this.handle.release();
  }

  /**
   * No stamp: telling whether anything changed would cost a round trip to the server (or a change
   * stream per process that lags behind the write it reports), as much as the read it would save.
   * Readers on MongoDB read every time.
   */
  changeStamp(): null {
    return null;
  }

  /** Takes the checkpoint for the batch; answers its epoch. */
  private async claim(batch: ApplyBatch): Promise<number> {
    const fence = fenceClaim(batch.fence);
    const filter = { _id: batch.projection, position: batch.expectedPosition, status: batch.mode, ...fence.filter };
    const take = async () => {
      const doc = await this.checkpoints.findOneAndUpdate(filter, { $set: { pendingTo: batch.position }, ...fence.update }, { returnDocument: 'after', projection: { epoch: 1 } });
      return doc ? (doc.epoch ?? 0) : null;
    };
    const taken = await take();
    if (taken !== null) return taken;
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
          epoch: 0,
        });
        return 0;
      } catch (err) {
        if (!hasCode(err, DUPLICATE_KEY)) throw err;
        const again = await take();
        if (again !== null) return again;
      }
    }
    throw await this.mismatch(batch);
  }

  /** Stops a batch whose claim was revoked (a rebuild started) before it writes much more. */
  private async assertClaim(batch: ApplyBatch): Promise<void> {
    if (!(await this.claimHeld(batch))) throw await this.mismatch(batch);
  }

  private async claimHeld(batch: ApplyBatch): Promise<boolean> {
    const held = await this.checkpoints.findOne(
      { _id: batch.projection, position: batch.expectedPosition, status: batch.mode, pendingTo: batch.position },
      { projection: { _id: 1 } },
    );
    return held !== null;
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


function toCheckpoint(doc: CheckpointDoc): Checkpoint {
  return { projection: doc._id, position: doc.position, status: doc.status, updatedAt: doc.updatedAt, lastEventAt: doc.lastEventAt ?? null };
}

/** Same names as the embedded store accepts; it also keeps `_checkpoints` and system collections out of reach. */
function checkCollection(name: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid collection name ${name}`);
  return name;
}


function hasCode(err: unknown, code: number): boolean {
  return err instanceof MongoServerError && err.code === code;
}
