import type { Fence, LeaseStore } from './leases.js';

/**
 * Read-model store port. Documents live in named collections, keyed by a string `_id`.
 * The operations are the ones projections need: idempotent replace, counter-style updates,
 * deletes by filter, and indexed range queries with keyset (cursor) paging. Both adapters
 * (embedded SQLite, MongoDB) implement exactly these semantics; the contract suite checks it.
 */
export type Scalar = string | number | boolean | null;

export type FieldCondition =
  | Scalar
  | {
      $eq?: Scalar;
      $ne?: Scalar;
      $gt?: Scalar;
      $gte?: Scalar;
      $lt?: Scalar;
      $lte?: Scalar;
      $in?: readonly Scalar[];
      $exists?: boolean;
    };

/** Conjunction of conditions on (possibly dotted) field paths. */
export type Filter = Record<string, FieldCondition>;

export type SortSpec = ReadonlyArray<readonly [field: string, direction: 1 | -1]>;

export type Doc = { _id: string } & Record<string, unknown>;

export type IndexSpec = { fields: SortSpec; unique?: boolean };

export type CollectionSpec = {
  name: string;
  indexes?: readonly IndexSpec[];
  /**
   * Top-level fields, besides the index fields, that queries filter, sort or group on. An
   * embedded store keeps them (and every index field) as real columns; MongoDB needs nothing.
   */
  columns?: readonly string[];
  /** Declared columns that hold booleans (or null): an embedded store keeps them as 0/1 only. */
  booleans?: readonly string[];
  /**
   * Top-level field holding an ISO instant after which a document may go without anyone asking
   * (MongoDB: a TTL index). Expired documents must already read as absent to their users: the
   * removal only keeps the collection small.
   */
  expireAt?: string;
  /**
   * The collection cannot be rebuilt from events (the webhook engine's delivery log): a new
   * version that keeps its columns (adding some, changing, adding or removing indexes) is extended
   * in place, keeping its documents (an index no longer declared is dropped, a new one built from
   * them), where other collections are recreated empty for their projection to rebuild.
   */
  extendInPlace?: boolean;
  /**
   * The version of its documents' shape, raised when documents written before cannot be read any
   * more (a field's encoding changed). Every store then recreates the collection empty and reports
   * it from ensureCollections, so its projection rebuilds it: MongoDB, whose documents have no
   * declared shape, would otherwise keep the old documents.
   */
  version?: number;
};

export type EnsureOptions = {
  /**
   * `false`: create the collections without their secondary indexes. A bulk load (a rebuild)
   * fills them first and then builds the indexes in one pass by calling ensureCollections again,
   * which is much cheaper than maintaining them row by row.
   */
  indexes?: boolean;
};

export type FindQuery = {
  filter?: Filter;
  /** Keyset order. `_id` is appended as the final tie-breaker when absent. */
  sort?: SortSpec;
  limit?: number;
  /** Values of the sort fields (with the `_id` tie-breaker last) of the last document seen. */
  after?: readonly Scalar[];
  /**
   * Top-level fields to return (with `_id`); absent: whole documents. A scan that needs a few
   * fields of many documents (statistics, the merged view's neighbours) then reads only those.
   */
  fields?: readonly string[];
};

/** Documents keep whatever JSON they were given; these updates mirror MongoDB's operators. */
export type UpdateChange = {
  op: 'update';
  collection: string;
  id: string;
  set?: Record<string, unknown>;
  setOnInsert?: Record<string, unknown>;
  unset?: readonly string[];
  inc?: Record<string, number>;
  min?: Record<string, Scalar>;
  max?: Record<string, Scalar>;
  /** Create the document when missing (default false: a missing document is left alone). */
  upsert?: boolean;
};

export type Change =
  | { op: 'put'; collection: string; doc: Doc }
  | UpdateChange
  | { op: 'delete'; collection: string; id: string }
  | { op: 'deleteMany'; collection: string; filter: Filter };

/**
 * A change tagged with the global position of the event that produced it and its index among
 * that event's changes. Adapters that cannot make a batch atomic use the tag to make replays
 * idempotent.
 */
export type PositionedChange = Change & { position: number; index: number };

export type Checkpoint = {
  projection: string;
  position: number;
  status: 'live' | 'rebuilding';
  updatedAt: string;
  lastEventAt: string | null;
};

export type ApplyBatch = {
  projection: string;
  /** The checkpoint the batch starts from; the batch is refused when it no longer matches. */
  expectedPosition: number;
  position: number;
  /** `live` batches need a live checkpoint; `rebuilding` batches come from the rebuild that owns it. */
  mode: Checkpoint['status'];
  lastEventAt: string | null;
  changes: readonly PositionedChange[];
  /**
   * The lease the writer holds for this checkpoint (several service processes): the batch is
   * refused with LeaseLostError, in the same transaction, unless the lease still has this
   * generation.
   */
  fence?: Fence;
  /**
   * The batch applies an erasure (a user's or a provider's data): the tables its deletions
   * removed rows from are noted for the scrub that makes them physically gone (SQLite,
   * docs/erasure.md "Physical deletion"; MongoDB has nothing to note).
   */
  erasing?: boolean;
  /**
   * The batch need not be durable when it is answered: a rebuild's, which a crash starts again
   * from the first event. The embedded store commits several such batches in one transaction
   * (SqliteGroupCommit); MongoDB writes each as it comes.
   */
  deferCommit?: boolean;
};

/** Grouped counts and sums, computed where the data is (coverage reports, statistics). */
export type AggregateQuery = {
  filter?: Filter;
  /** Fields to group by; each result row carries their values under the same names. */
  groupBy: readonly string[];
  sum?: readonly string[];
  min?: readonly string[];
  max?: readonly string[];
  /** Groups in groupBy order (ascending); at most `limit` of them. */
  limit?: number;
};

/**
 * ReadStore.joinBytes: the documents of a filter grouped by top-level fields, each group with the
 * bytes of one field of its documents joined end to end into one value.
 */
export type JoinBytesQuery = {
  filter?: Filter;
  /** Fields to group by; each result carries their values under the same names, groups in their (ascending) order. */
  groupBy: readonly string[];
  /** A top-level field holding bytes (a Buffer), a declared column on the embedded store. */
  field: string;
};

export type JoinedBytes = { group: Record<string, Scalar>; bytes: Buffer };

export type AggregateRow = {
  group: Record<string, Scalar>;
  count: number;
  sum: Record<string, number>;
  min: Record<string, Scalar>;
  max: Record<string, Scalar>;
};

export class CheckpointMismatchError extends Error {
  readonly code = 'CHECKPOINT_MISMATCH';
  constructor(readonly projection: string, readonly expected: number, readonly actual: number | null, readonly status?: string) {
    super(`projection ${projection}: checkpoint moved (expected ${expected}, found ${actual} ${status ?? ''})`);
    this.name = 'CheckpointMismatchError';
  }
}

export interface ReadStore {
  readonly kind: 'sqlite' | 'mongodb';
  /**
   * Creates missing collections and their indexes. Answers the names of existing collections it
   * had to recreate empty because their declared shape changed (their projections must rebuild).
   * A collection declared `extendInPlace` keeps its documents through a shape that keeps its
   * columns, whatever its indexes become: it is extended, not recreated.
   */
  ensureCollections(specs: readonly CollectionSpec[], options?: EnsureOptions): Promise<string[]>;
  dropCollections(names: readonly string[]): Promise<void>;
  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null>;
  find<T extends Doc = Doc>(collection: string, query?: FindQuery): Promise<T[]>;
  count(collection: string, filter?: Filter): Promise<number>;
  aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]>;
  /**
   * aggregate's rows in the same order, each handed to `each` as it is read, none kept: a caller
   * that folds the groups (a coverage report over years: tens of thousands of them) holds only
   * what it folds them into, where the whole answer would be alive at once and outlive young
   * collections (issue 38). `each` runs synchronously and must not call the store.
   */
  aggregateEach(collection: string, query: AggregateQuery, each: (row: AggregateRow) => void): Promise<void>;
  /**
   * The bytes of `query.field` of each group's documents joined into one value, in no particular
   * order: each value must be able to say where it ends and whose it is (a packed rollup field names
   * its day). Documents without bytes there are left out, and so are groups with none. A long
   * window's statistics read a series' days as one value this way, where a find hands over a
   * document and a Buffer per day (issue 38).
   */
  joinBytes(collection: string, query: JoinBytesQuery): Promise<JoinedBytes[]>;
  /**
   * Applies changes outside any projection (tests, tools, the webhook engine's outcomes). With a
   * `fence` the changes are refused with LeaseLostError unless the lease still has that
   * generation: in the same transaction on SQLite; on MongoDB (no multi-document transaction on a
   * standalone server) by a read of the lease before every chunk of writes.
   */
  applyChanges(changes: readonly Change[], options?: { fence?: Fence; erasing?: boolean }): Promise<void>;
  /**
   * Compare-and-set on one document, as one atomic write: sets `set`'s top-level fields only when
   * the stored document's fields equal `expected` (null matches a missing field too, as in
   * MongoDB). Answers whether it wrote; a missing document is never written. Of several callers
   * expecting the same values, exactly one succeeds (request bookkeeping: idempotency leases).
   */
  updateIf(collection: string, id: string, expected: Readonly<Record<string, Scalar>>, set: Readonly<Record<string, unknown>>): Promise<boolean>;
  /**
   * Applies a projection's batch and advances its checkpoint: atomically (SQLite) or
   * idempotently under replay (MongoDB). Refused with CheckpointMismatchError when the stored
   * checkpoint is not `expectedPosition` or the projection is being rebuilt by someone else.
   */
  applyBatch(batch: ApplyBatch): Promise<void>;
  getCheckpoint(projection: string): Promise<Checkpoint | null>;
  listCheckpoints(): Promise<Checkpoint[]>;
  /** Sets a checkpoint unconditionally (rebuild start and end). */
  setCheckpoint(projection: string, position: number, status: Checkpoint['status']): Promise<void>;
  /**
   * Makes deleted documents unreadable in the store's files, as far as the backend can (erasure,
   * docs/erasure.md): the embedded store zeroes rows as it deletes them, and here rewrites its
   * file from the live rows (copies that B-tree rebalancing left behind are gone only then) and
   * empties its write-ahead log. With `rewrite: false`, only the log is emptied (cheap; what
   * rebalancing left stays until the next rewrite). MongoDB has no such operation (its storage
   * engine reuses freed blocks).
   */
  purgeDeleted?(options?: { rewrite?: boolean }): Promise<unknown>;
  /** Leases of background work shared by several service processes (src/readstore/leases.ts). */
  leases?(): LeaseStore;
  /**
   * A number that differs from every earlier answer once any document of this store may have
   * changed, whoever changed it (this connection, another thread, another process). Cheap enough
   * to ask on every request: a reader that asks it first, then reads, may keep what it read and
   * reuse it for as long as the answer stays the same (src/shared/stampedCache.ts). null: the
   * adapter cannot tell cheaply, and nothing read may be kept.
   */
  changeStamp(): number | null;
  close(): Promise<void>;
}

/**
 * A checkpoint never moves backwards: a batch must end at or after where it starts. Checked by
 * every adapter before it writes (a runner fed the same events twice would otherwise rewind).
 */
export function assertForward(batch: ApplyBatch): void {
  if (batch.position < batch.expectedPosition) {
    throw new CheckpointMismatchError(batch.projection, batch.expectedPosition, batch.position, 'backwards');
  }
}

export const TIE_BREAKER = '_id';

export function withTieBreaker(sort: SortSpec | undefined): SortSpec {
  const s = sort ?? [];
  if (s.some(([f]) => f === TIE_BREAKER)) return s;
  const dir = s.length ? s[s.length - 1]![1] : 1;
  return [...s, [TIE_BREAKER, dir]];
}
