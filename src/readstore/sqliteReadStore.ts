import Database from 'better-sqlite3';
import { applyUpdate } from './documentUpdate.js';
import { assertForward, CheckpointMismatchError, withTieBreaker, type AggregateQuery, type AggregateRow, type ApplyBatch, type Change, type Checkpoint, type CollectionSpec, type Doc, type EnsureOptions, type Filter, type FindQuery, type JoinBytesQuery, type JoinedBytes, type ReadStore, type Scalar, type UpdateChange } from './readStore.js';
import { BUSY_TIMEOUT_MS } from '../shared/sqliteWriteLock.js';
import { SqliteGroupCommit } from '../shared/sqliteGroupCommit.js';
import { emptyWriteAheadLog, eraseOnDelete } from '../shared/sqlitePurge.js';
import { filterSql, keysetBranches, orderSql, whereSql } from './sqliteQuery.js';
import type { Fence, LeaseStore } from './leases.js';
import { checkFence, LEASES_DDL, SqliteLeases } from './sqliteLeases.js';
import { columnValue, extendsShape, extensionSql, SqliteTable, tableName } from './sqliteTable.js';
import { pushCounterParams, UpdatePlans } from './sqliteUpdatePlans.js';
import { aggregateRow, aggregateSql, joinBytesSql, joinedBytesOf } from './sqliteAggregate.js';
import { SqliteScrub } from '../shared/sqliteScrub.js';
import { limitSql } from '../shared/sqliteLimit.js';
import { CHECKPOINTS_DDL, READ_CHECKPOINT, toCheckpoint, WRITE_CHECKPOINT, type CheckpointRow } from './sqliteCheckpoints.js';
import { ensureIndex, markForScrub, SCRUB_DDL, useIncrementalVacuum, type ScrubReport } from '../shared/sqliteScrubPass.js';


const STATEMENT_CACHE = 2000;

/**
 * Embedded read-model store: one table per collection with its declared fields as real columns
 * and the rest of each document as JSON (`SqliteTable`). Declared indexes are plain column
 * indexes; queries use the same columns, so SQLite's planner picks them. A projection batch and
 * its checkpoint commit together, in the transaction of the writes asked for in the same turn
 * (`write`). Statements are prepared once and cached.
 */
export class SqliteReadStore implements ReadStore {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly scrubber: SqliteScrub;
  private readonly stmtCache = new Map<string, Database.Statement>();
  private readonly tables = new Map<string, SqliteTable>();
  /** Statement plans of update shapes (fastUpdate). */
  private readonly plans = new UpdatePlans(STATEMENT_CACHE);
  private readonly commits: SqliteGroupCommit;
  /** Writes asked for and not yet answered: close lets them finish first. */
  private readonly pending = new Set<Promise<unknown>>();

  /**
   * `cacheMiB`: SQLite's page cache for this connection (the projector thread's wants more).
   * `commitSpacingMs`: SqliteGroupCommit's spacing of commits. `tempInMemory`: savepoint journals
   * (each write of a group runs in one) and temporary tables in memory, never spilled to a file.
   * Both for the service's HTTP thread (stores.ts).
   */
  constructor(options: { path: string; cacheMiB?: number; commitSpacingMs?: number; tempInMemory?: boolean }) {
    this.db = new Database(options.path);
    this.scrubber = new SqliteScrub(options.path, this.db);
    useIncrementalVacuum(this.db);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.db.pragma(`cache_size = -${(options.cacheMiB ?? 16) * 1024}`);
    eraseOnDelete(this.db);
    if (options.tempInMemory) this.db.pragma('temp_store = MEMORY');
    this.db.exec(CHECKPOINTS_DDL);
    this.db.exec('CREATE TABLE IF NOT EXISTS _collections (name TEXT PRIMARY KEY, spec TEXT NOT NULL, signature TEXT NOT NULL)');
    this.db.exec(LEASES_DDL);
    this.db.exec(SCRUB_DDL);
    this.commits = new SqliteGroupCommit(this.db, undefined, undefined, options.commitSpacingMs);
  }

  private leaseStore: SqliteLeases | null = null;
  /** Writes this connection ran: its own commits do not move `data_version`. */
  private ownWrites = 0;
  private dataVersion: Database.Statement | null = null;

  /**
   * `PRAGMA data_version` moves when another connection (thread or process) committed; this
   * connection's own writes are counted beside it. Both only grow, so their sum changes with either.
   */
  changeStamp(): number {
    this.dataVersion ??= this.db.prepare('PRAGMA data_version').pluck();
    return (this.dataVersion.get() as number) + this.ownWrites;
  }

  /**
   * Every write of this store goes through here, so that changeStamp sees it (counted even when it
   * failed, and before its group commits: in the same synchronous step, so no reader of this
   * thread sees the write under the stamp from before it). Writes asked for in the same turn share
   * one transaction (SqliteGroupCommit), each `run` in its own savepoint: a projection batch's
   * error undoes its own changes and checkpoint only, and each caller is answered after the commit.
   * The dozen projections of a thread, woken together by the shared tail, so commit once per turn.
   */
  private write<T>(run: () => T, options?: { deferred?: boolean }): Promise<T> {
    const done = this.commits.write(() => {
      try {
        return run();
      } finally {
        this.ownWrites++;
      }
    }, options);
    this.pending.add(done);
    const settled = () => this.pending.delete(done);
    done.then(settled, settled);
    return done;
  }

  leases(): LeaseStore {
    return (this.leaseStore ??= new SqliteLeases(this.db));
  }

  async ensureCollections(specs: readonly CollectionSpec[], options: EnsureOptions = {}): Promise<string[]> {
    const reshaped: string[] = [];
    let extended = false;
    await this.write(() => {
      reshaped.length = 0;
      for (const spec of specs) {
        const t = new SqliteTable(spec);
        const stored = this.stmt('SELECT spec, signature FROM _collections WHERE name = ?').get(spec.name) as { spec: string; signature: string } | undefined;
        const present = !!this.stmt("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?").get(t.table);
        if (!present || stored?.signature !== t.signature) {
          const before = present && stored ? new SqliteTable(JSON.parse(stored.spec) as CollectionSpec) : null;
          if (before && extendsShape(before, t)) {
            // Only columns and indexes added to a collection no projection rebuilds: rows kept.
            for (const sql of extensionSql(before, t)) this.db.exec(sql);
            extended = true;
          } else {
            // A table of another shape (an older version's) cannot be migrated in place: its
            // projection rebuilds it from the events.
            if (present) {
              this.db.exec(`DROP TABLE ${t.table}`);
              reshaped.push(spec.name);
            }
            this.db.exec(t.tableSql());
          }
          this.stmt('INSERT INTO _collections (name, spec, signature) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET spec = excluded.spec, signature = excluded.signature').run(
            spec.name,
            JSON.stringify(spec),
            t.signature,
          );
        }
        if (options.indexes !== false) for (const sql of t.indexSql()) ensureIndex(this.db, sql);
        this.tables.set(spec.name, t);
      }
    });
    if (reshaped.length || extended) {
      this.stmtCache.clear();
      this.plans.clear();
    }
    return reshaped;
  }

  async dropCollections(names: readonly string[]): Promise<void> {
    await this.write(() => {
      for (const n of names) {
        this.db.exec(`DROP TABLE IF EXISTS ${tableName(n)}`);
        this.stmt('DELETE FROM _collections WHERE name = ?').run(n);
        this.tables.delete(n);
      }
    });
    this.stmtCache.clear();
    this.plans.clear();
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    const t = this.table(collection);
    if (!t) return null;
    const row = this.rawStmt(`SELECT ${t.selectList} FROM ${t.table} WHERE _id = ?`).get(id) as unknown[] | undefined;
    return row ? (t.decode(row) as T) : null;
  }

  async find<T extends Doc = Doc>(collection: string, query: FindQuery = {}): Promise<T[]> {
    const t = this.table(collection);
    if (!t) return [];
    const projection = query.fields ? t.projection(query.fields) : null;
    const decode = projection?.decode ?? ((r: unknown[]) => t.decode(r));
    const out: T[] = [];
    this.scan(t, query, projection?.selectList ?? t.selectList, (r) => out.push(decode(r) as T));
    return out;
  }

  /** The rows of a find in order, read with `selectList`: after a cursor, the ranges that follow it (keysetBranches), read until the page is full. */
  private scan(t: SqliteTable, query: FindQuery, selectList: string, onRow: (row: unknown[]) => void): void {
    const sort = withTieBreaker(query.sort);
    const branches = query.after ? keysetBranches(t, sort, query.after) : [null];
    let remaining = query.limit;
    for (const branch of branches) {
      if (remaining !== undefined && remaining <= 0) break;
      const params: unknown[] = [];
      let sql = `SELECT ${selectList} FROM ${t.table} WHERE ${whereSql(t, query.filter ?? {}, branch, params)} ORDER BY ${orderSql(t, sort)}`;
      // Written in, not bound: a bound limit makes SQLite prepare the statement again at every run (src/shared/sqliteLimit.ts).
      if (remaining !== undefined) sql += ` ${limitSql(remaining)}`;
      const rows = this.rawStmt(sql).all(...params) as unknown[][];
      for (const r of rows) onRow(r);
      if (remaining !== undefined) remaining -= rows.length;
    }
  }

  async count(collection: string, filter: Filter = {}): Promise<number> {
    const t = this.table(collection);
    if (!t) return 0;
    const params: unknown[] = [];
    const row = this.stmt(`SELECT COUNT(*) AS n FROM ${t.table} WHERE ${filterSql(t, filter, params)}`).get(...params) as { n: number };
    return row.n;
  }

  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    const rows: AggregateRow[] = [];
    await this.aggregateEach(collection, query, (row) => rows.push(row));
    return rows;
  }

  async aggregateEach(collection: string, query: AggregateQuery, each: (row: AggregateRow) => void): Promise<void> {
    const t = this.table(collection);
    if (!t) return;
    const { sql, params } = aggregateSql(t, query);
    for (const r of this.rawStmt(sql).iterate(...params) as IterableIterator<unknown[]>) each(aggregateRow(query, r));
  }

  async joinBytes(collection: string, query: JoinBytesQuery): Promise<JoinedBytes[]> {
    const t = this.table(collection);
    if (!t) return [];
    const { sql, params } = joinBytesSql(t, query);
    return joinedBytesOf(query, this.rawStmt(sql).all(...params) as unknown[][]);
  }

  async applyChanges(changes: readonly Change[], options?: { fence?: Fence; erasing?: boolean }): Promise<void> {
    await this.write(() => {
      checkFence(this.db, options?.fence);
      this.applyAll(changes, options?.erasing);
    });
  }

  async updateIf(collection: string, id: string, expected: Readonly<Record<string, Scalar>>, set: Readonly<Record<string, unknown>>): Promise<boolean> {
    // Read, compare and write in one IMMEDIATE transaction (the group's): no other connection writes in between.
    return this.write((): boolean => {
      const t = this.table(collection);
      if (!t) throw new Error(`collection ${collection} is not declared`);
      const row = this.rawStmt(`SELECT ${t.selectList} FROM ${t.table} WHERE _id = ?`).get(id) as unknown[] | undefined;
      if (!row) return false;
      const doc = t.decode(row);
      if (Object.entries(expected).some(([k, v]) => (doc[k] ?? null) !== v)) return false;
      this.putRow(t, t.encode(applyUpdate(doc, { op: 'update', collection, id, set: { ...set } })!));
      return true;
    });
  }

  async applyBatch(batch: ApplyBatch): Promise<void> {
    assertForward(batch);
    // The checkpoint is checked and moved in the batch's own savepoint, with its changes.
    await this.write(() => {
      checkFence(this.db, batch.fence);
      const cp = this.readCheckpoint(batch.projection);
      const position = cp?.position ?? 0;
      const status = cp?.status ?? 'live';
      if (position !== batch.expectedPosition || status !== batch.mode) {
        throw new CheckpointMismatchError(batch.projection, batch.expectedPosition, cp?.position ?? null, status);
      }
      this.applyAll(batch.changes, batch.erasing);
      this.writeCheckpoint(batch.projection, batch.position, batch.mode, batch.lastEventAt ?? cp?.last_event_at ?? null);
    }, { deferred: batch.deferCommit === true });
  }

  async getCheckpoint(projection: string): Promise<Checkpoint | null> {
    const row = this.readCheckpoint(projection);
    return row ? toCheckpoint(row) : null;
  }

  async listCheckpoints(): Promise<Checkpoint[]> {
    const rows = this.stmt('SELECT * FROM _checkpoints ORDER BY projection').all() as CheckpointRow[];
    return rows.map(toCheckpoint);
  }

  async setCheckpoint(projection: string, position: number, status: Checkpoint['status']): Promise<void> {
    await this.write(() => this.writeCheckpoint(projection, position, status, position === 0 ? null : (this.readCheckpoint(projection)?.last_event_at ?? null)));
  }

  /**
   * Deleted rows were zeroed as they went (secure_delete); the scrub rebuilds the tables an
   * erasure deleted from, removing the copies that rebalancing left in live pages, and empties the
   * log that still holds earlier images. `rewrite: false`: the log only.
   */
  async purgeDeleted(options: { rewrite?: boolean } = {}): Promise<ScrubReport | undefined> {
    if (options.rewrite !== false) return this.scrubber.run();
    await emptyWriteAheadLog(this.db);
    return undefined;
  }

  async close(): Promise<void> {
    // A write asked for just before close (not awaited) still commits, as when writes ran at once.
    await Promise.allSettled([...this.pending]);
    await this.scrubber.close();
    this.commits.close();
    this.db.close();
  }

  private readCheckpoint(projection: string): CheckpointRow | undefined {
    return this.stmt(READ_CHECKPOINT).get(projection) as CheckpointRow | undefined;
  }

  private writeCheckpoint(projection: string, position: number, status: string, lastEventAt: string | null): void {
    this.stmt(WRITE_CHECKPOINT).run(projection, position, status, new Date().toISOString(), lastEventAt);
  }

  /** Applies changes inside the caller's transaction; an erasure's deletions mark their tables for the scrub. */
  private applyAll(changes: readonly Change[], erasing = false): void {
    const deletedFrom = new Set<string>();
    for (const c of changes) if (this.applyOne(c) > 0 && erasing) deletedFrom.add(this.table(c.collection)!.table);
    for (const table of deletedFrom) markForScrub(this.db, table);
  }

  /** Answers the rows a deletion removed (0 for other changes). */
  private applyOne(c: Change): number {
    const t = this.table(c.collection);
    if (!t) throw new Error(`collection ${c.collection} is not declared`);
    switch (c.op) {
      case 'put':
        this.putRow(t, t.encode(c.doc));
        return 0;
      case 'update':
        if (!this.fastUpdate(t, c)) this.readModifyWrite(t, c);
        return 0;
      case 'delete':
        return this.stmt(`DELETE FROM ${t.table} WHERE _id = ?`).run(c.id).changes;
      case 'deleteMany': {
        const params: unknown[] = [];
        return this.stmt(`DELETE FROM ${t.table} WHERE ${filterSql(t, c.filter, params)}`).run(...params).changes;
      }
    }
  }

  /** `values` as `t.encode` gives them: `_id`, every column, `doc`. */
  private putRow(t: SqliteTable, values: unknown[]): void {
    this.stmt(t.upsertSql).run(...values);
  }

  private readModifyWrite(t: SqliteTable, c: UpdateChange): void {
    const row = this.rawStmt(`SELECT ${t.selectList} FROM ${t.table} WHERE _id = ?`).get(c.id) as unknown[] | undefined;
    const next = applyUpdate(row ? t.decode(row) : null, c);
    if (next) this.putRow(t, t.encode(next));
  }

  /**
   * One statement for the updates projections make all the time (record upserts, counters):
   * top-level `set`/`setOnInsert` of any field, and `inc`/`min`/`max` of column fields. The
   * insert carries the whole new document; on conflict, columns are assigned or combined in SQL
   * and `doc` is patched with json_set/json_remove (MongoDB `$set` replaces a value, it does not
   * merge objects). Anything else (dotted paths, `unset`) reads, applies and writes back.
   * The statement of a change's shape (its fields, and which set values a column holds alone)
   * is planned once and reused: a million record upserts share a handful of plans.
   */
  private fastUpdate(t: SqliteTable, c: UpdateChange): boolean {
    if (c.unset?.length) return false;
    const set = c.set ?? {};
    const setFields = Object.keys(set);
    const plan = this.plans.of(t, c, set, setFields);
    if (!plan) return false;
    if (!c.upsert) {
      if (!plan.sql) return true;
      const params: unknown[] = [];
      for (const f of setFields) {
        const v = set[f];
        if (v !== undefined && t.isColumn(f)) params.push(columnValue(v));
      }
      pushCounterParams(c, params);
      for (const f of setFields) {
        const v = set[f];
        if (v !== undefined && !(t.isColumn(f) && t.holdsAll(f, v))) params.push(JSON.stringify(v));
      }
      this.stmt(plan.sql).run(...params, c.id);
      return true;
    }
    // The document as inserted when new (what applyUpdate(null, c) gives, for top-level fields);
    // on conflict the set fields are taken from it (`excluded`), so only counters bind again.
    const params = t.encodeMerged(c.id, [c.setOnInsert, set, c.inc, c.min, c.max]);
    pushCounterParams(c, params);
    this.stmt(plan.sql).run(...params);
    return true;
  }

  /** The shape of a collection: declared in this process, or as the process that created it declared it. */
  private table(collection: string): SqliteTable | null {
    const known = this.tables.get(collection);
    if (known) return known;
    tableName(collection);
    const stored = this.stmt('SELECT spec FROM _collections WHERE name = ?').get(collection) as { spec: string } | undefined;
    if (!stored) return null;
    const t = new SqliteTable(JSON.parse(stored.spec) as CollectionSpec);
    this.tables.set(collection, t);
    return t;
  }

  private stmt(sql: string): Database.Statement {
    let s = this.stmtCache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      if (this.stmtCache.size > STATEMENT_CACHE) this.stmtCache.clear();
      this.stmtCache.set(sql, s);
    }
    return s;
  }

  /** A statement that returns rows as arrays (no per-row object with column names). */
  private rawStmt(sql: string): Database.Statement {
    const key = `raw:${sql}`;
    let s = this.stmtCache.get(key);
    if (!s) {
      s = this.db.prepare(sql).raw(true);
      if (this.stmtCache.size > STATEMENT_CACHE) this.stmtCache.clear();
      this.stmtCache.set(key, s);
    }
    return s;
  }
}
