import { resolve as resolvePath } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { Observable } from 'rxjs';
import { checkAppend, checkAppends, ConcurrencyError, IdempotencyConflictError, StreamDeletedError, type AllFilter, type AppendResult, type Event, type EventStore, type ExpectedRevision, type ReadAllOptions, type ReadStreamOptions, type RecordedEvent, type StreamAppend, type SubscribeOptions } from './eventStore.js';
import { encodeData, EVENTS_COLUMNS, readBounded, toRecorded, type EventRow } from './sqliteEventRows.js';
import { rowFilter, SqliteEventTail, type TailMember } from './sqliteEventTail.js';
import { uuidv7 } from '../shared/ids.js';
import { BUSY_TIMEOUT_MS } from '../shared/sqliteWriteLock.js';
import { SqliteGroupCommit } from '../shared/sqliteGroupCommit.js';
import { eraseOnDelete } from '../shared/sqlitePurge.js';
import { SqliteScrub } from '../shared/sqliteScrub.js';
import { limitSql } from '../shared/sqliteLimit.js';
import { ensureIndex, markForScrub, SCRUB_DDL, useIncrementalVacuum } from '../shared/sqliteScrubPass.js';

type StreamRow = { stream: string; revision: number; deleted: number };

/** Physical "no stream" marker of this adapter; never leaves this file. */
const NO_STREAM = -1;
const STREAM_SOFT_DELETED = 1;
const STREAM_TOMBSTONED = 2;
/** The reads that take a limit, without it (`limited` writes it in). */
const READ_FORWARDS = 'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ASC';
const READ_BACKWARDS = 'SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC';
const READ_ALL = 'SELECT * FROM events WHERE position > ? ORDER BY position ASC';

export type SqliteEventStoreOptions = {
  /** File path, or ':memory:' for tests. */
  path: string;
  /**
   * How often a live subscription looks for appends made by other processes. Appends by other
   * connections in this process (worker threads) wake it at once.
   */
  pollIntervalMs?: number;
  /**
   * `temp_store = MEMORY`: the journals of the group commit's savepoints stay in memory instead of
   * spilling to a temporary file past 64 KiB (docs/store-threads.md "Savepoint journals in
   * memory"). The service's connections (its writer thread's and the HTTP thread's reader).
   */
  tempInMemory?: boolean;
};

/**
 * Embedded event store on better-sqlite3. WAL mode with synchronous=FULL: an append is on
 * disk when its promise resolves. Global positions are AUTOINCREMENT row ids assigned inside
 * an IMMEDIATE transaction, so commit order equals position order and a reader never sees a
 * gap that is later filled (what makes catch-up subscriptions safe).
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly scrubber: SqliteScrub;
  /** Reads each new event once for every live subscription of this connection. */
  private readonly tail: SqliteEventTail;
  /** Tells the other connections to this file in this process (other threads) about appends. */
  private readonly channel: BroadcastChannel | null;
  private readonly pollIntervalMs: number;
  private closed = false;
  /**
   * Appends and deletions share the group commit, so that writes commit in the order they were
   * asked for: an append asked for before a delete can never land after it.
   */
  private readonly commits: SqliteGroupCommit;
  private readonly stmts;
  private readonly filteredStmts = new Map<string, Database.Statement<(string | number)[], number>>();
  /** The reads of streams and of the log, each with its limit in its SQL (src/shared/sqliteLimit.ts). */
  private readonly limitedStmts = new Map<string, Database.Statement>();

  constructor(options: SqliteEventStoreOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    this.db = new Database(options.path);
    this.scrubber = new SqliteScrub(options.path, this.db);
    useIncrementalVacuum(this.db);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (options.tempInMemory) this.db.pragma('temp_store = MEMORY');
    eraseOnDelete(this.db);
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (${EVENTS_COLUMNS});
      CREATE TABLE IF NOT EXISTS streams (
        stream   TEXT PRIMARY KEY,
        revision INTEGER NOT NULL,
        deleted  INTEGER NOT NULL DEFAULT 0
      ) WITHOUT ROWID;
      ${SCRUB_DDL};
    `);
    // Filtered catch-up (a projection's event types) reads this instead of scanning the log.
    ensureIndex(this.db, 'CREATE INDEX IF NOT EXISTS events_type_position ON events (type, position)');
    this.stmts = {
      getStream: this.db.prepare<[string], StreamRow>('SELECT stream, revision, deleted FROM streams WHERE stream = ?'),
      upsertStream: this.db.prepare<[string, number]>(
        'INSERT INTO streams (stream, revision, deleted) VALUES (?, ?, 0) ON CONFLICT(stream) DO UPDATE SET revision = excluded.revision, deleted = 0',
      ),
      markDeleted: this.db.prepare<[number, string]>('UPDATE streams SET deleted = ? WHERE stream = ?'),
      deleteEvents: this.db.prepare<[string]>('DELETE FROM events WHERE stream = ?'),
      findById: this.db.prepare<[string], Pick<EventRow, 'position' | 'stream' | 'revision'>>(
        'SELECT position, stream, revision FROM events WHERE id = ?',
      ),
      insert: this.db.prepare<[string, string, number, string, string | Buffer, string | null, number]>(
        'INSERT INTO events (id, stream, revision, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      head: this.db.prepare<[], { p: number | null }>('SELECT MAX(position) AS p FROM events'),
      atPosition: this.db.prepare<[number], EventRow>('SELECT * FROM events WHERE position = ?'),
    };
    this.commits = new SqliteGroupCommit(this.db, (results) => this.committed(results));
    this.tail = new SqliteEventTail(
      { rowsAfter: (after, max) => this.limited<[number], EventRow>(READ_ALL, max).iterate(after), head: () => this.stmts.head.get()?.p ?? 0 },
      this.pollIntervalMs,
    );
    if (options.path === ':memory:') this.channel = null;
    else {
      this.channel = new BroadcastChannel(`wellstream-events:${resolvePath(options.path)}`);
      this.channel.onmessage = () => this.tail.wake();
      // A listener must not keep a process alive that has nothing else to do.
      this.channel.unref();
    }
  }

  async appendToStream(
    streamName: string,
    events: readonly Event[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    checkAppend(streamName, events);
    return this.commits.write(() => this.appendInSavepoint(streamName, events, options.expectedRevision ?? 'any'));
  }

  /**
   * One write of the group commit whose savepoint holds every stream's append: a failure on any
   * stream rolls back the ones before it in the same call, and all are durable with one fsync.
   */
  async appendToStreams(requests: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkAppends(requests);
    return this.commits.write(() => requests.map((r) => this.appendInSavepoint(r.streamName, r.events, r.expectedRevision ?? 'any')));
  }

  /**
   * Another connection to this file in this process appended (the writer thread of
   * threadedSqliteEventStore.ts, which answered the append): this connection's subscribers read on.
   */
  noticeAppends(): void {
    this.tail.wake();
  }

  /** After a group commit: wakes this connection's subscribers and tells the other threads. */
  private committed(results: unknown[]): void {
    let last = 0;
    // An appendToStreams answers with one result per stream.
    for (const r of results.flat()) {
      const a = r as AppendResult | undefined;
      if (a && !a.replayed) last = Math.max(last, a.lastPosition);
    }
    if (!last) return;
    this.tail.wake();
    this.channel?.postMessage(last);
  }

  /** Runs in its own savepoint of the group's transaction (sqliteGroupCommit.ts). */
  private appendInSavepoint(streamName: string, events: readonly Event[], expected: ExpectedRevision): AppendResult {
    const stream = this.stmts.getStream.get(streamName);
    if (stream?.deleted === STREAM_TOMBSTONED) throw new StreamDeletedError(streamName);
    const replay = this.findReplay(streamName, events);
    if (replay) return replay;
    const live = stream && stream.deleted === 0 ? stream.revision : NO_STREAM;
    checkExpected(streamName, expected, live);
    // A soft-deleted stream keeps counting revisions, as KurrentDB does.
    let revision = stream ? stream.revision : NO_STREAM;
    const now = Date.now();
    let lastPosition = 0;
    for (const e of events) {
      revision += 1;
      try {
        const info = this.stmts.insert.run(
          e.id ?? uuidv7(now),
          streamName,
          revision,
          e.type,
          encodeData(e.data),
          e.metadata ? JSON.stringify(e.metadata) : null,
          now,
        );
        lastPosition = Number(info.lastInsertRowid);
      } catch (err) {
        if (isUniqueViolation(err, 'events.id')) throw new IdempotencyConflictError(streamName, e.id ?? '');
        throw err;
      }
    }
    this.stmts.upsertStream.run(streamName, revision);
    return { nextExpectedRevision: revision, lastPosition, replayed: false };
  }

  /**
   * A re-sent append (same event ids, same stream, same order) is answered with the original
   * result and writes nothing. Only the first id is looked up on the fast path: ids the store
   * generated itself cannot collide, and a partial overlap fails on the unique index.
   */
  private findReplay(streamName: string, events: readonly Event[]): AppendResult | null {
    const firstId = events[0]!.id;
    if (!firstId) return null;
    const first = this.stmts.findById.get(firstId);
    if (!first) return null;
    let last = first;
    for (let i = 0; i < events.length; i++) {
      const id = events[i]!.id;
      const found = id ? this.stmts.findById.get(id) : undefined;
      if (!found || found.stream !== streamName || found.revision !== first.revision + i) {
        throw new IdempotencyConflictError(streamName, id ?? '');
      }
      last = found;
    }
    return { nextExpectedRevision: last.revision, lastPosition: last.position, replayed: true };
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const stream = this.stmts.getStream.get(streamName);
    if (stream?.deleted === STREAM_TOMBSTONED) throw new StreamDeletedError(streamName);
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const rows =
      options.direction === 'backwards'
        ? this.limited<[string, number], EventRow>(READ_BACKWARDS, max).all(streamName, options.fromRevision ?? Number.MAX_SAFE_INTEGER)
        : this.limited<[string, number], EventRow>(READ_FORWARDS, max).all(streamName, options.fromRevision ?? 0);
    return rows.map((row) => toRecorded(row));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAllSync(options.after ?? 0, options.maxCount ?? 1000, options.filter).events;
  }

  /**
   * Reads up to `max` matching events after `after`, fewer when their data passes READ_BUDGET
   * (never fewer than one). `scannedTo` is how far the log was looked at, so a filtered reader
   * can move its cursor past long runs of other events; `more` says the read stopped at a limit.
   */
  private readAllSync(after: number, max: number, filter?: AllFilter): { events: RecordedEvent[]; scannedTo: number; more: boolean } {
    if (!hasFilter(filter)) {
      const { events, more } = readBounded(this.limited<[number], EventRow>(READ_ALL, max).iterate(after), max);
      return { events, scannedTo: events.length ? events[events.length - 1]!.globalPosition : after, more };
    }
    const head = this.stmts.head.get()?.p ?? 0;
    const clauses: string[] = ['position > ?', 'position <= ?'];
    const params: (string | number)[] = [after, head];
    if (filter!.eventTypes?.length) {
      clauses.push(`type IN (${filter!.eventTypes.map(() => '?').join(',')})`);
      params.push(...filter!.eventTypes);
    }
    if (filter!.streamPrefixes?.length) {
      clauses.push(`(${filter!.streamPrefixes.map(() => 'substr(stream, 1, ?) = ?').join(' OR ')})`);
      for (const p of filter!.streamPrefixes) params.push(p.length, p);
    }
    // Positions first, then the rows: with event types the positions come from the (type, position)
    // index alone and are sorted as integers, where `SELECT *` sorted whole rows, record batches
    // and all, to keep the first few (the projections' waits ask for one position at a time).
    const sql = `SELECT position FROM events WHERE ${clauses.join(' AND ')} ORDER BY position ASC ${limitSql(max)}`;
    let stmt = this.filteredStmts.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<(string | number)[], number>(sql).pluck();
      if (this.filteredStmts.size > 200) this.filteredStmts.clear();
      this.filteredStmts.set(sql, stmt);
    }
    const positions = stmt.all(...params);
    const { events, more } = readBounded(this.rowsAt(positions), max);
    const scannedTo = more ? events[events.length - 1]!.globalPosition : Math.max(head, after);
    return { events, scannedTo, more };
  }

  /**
   * Catches up with its own reads of the log (filtered by the index when it has event types),
   * then joins the shared tail reader of this connection (sqliteEventTail.ts), which reads each
   * new event once for every live subscriber.
   */
  subscribeToAll(options: SubscribeOptions = {}): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      const member: TailMember = {
        cursor: options.after ?? 0,
        stopped: false,
        matches: rowFilter(options.filter),
        next: (e) => subscriber.next(e),
        complete: () => subscriber.complete(),
        error: (err) => subscriber.error(err),
      };
      const batchSize = 500;
      const catchUp = async () => {
        while (!member.stopped && !this.closed) {
          const { events, scannedTo, more } = this.readAllSync(member.cursor, batchSize, options.filter);
          for (const e of events) {
            if (member.stopped) return;
            subscriber.next(e);
          }
          member.cursor = scannedTo;
          if (member.stopped) return;
          if (!more) {
            // Read up to the head in this same step: from here on the shared reader hands it on.
            this.tail.join(member);
            return;
          }
          await new Promise((r) => setImmediate(r));
        }
        if (!member.stopped) subscriber.complete();
      };
      catchUp().catch((err) => subscriber.error(err));
      return () => this.tail.leave(member);
    });
  }

  private *rowsAt(positions: readonly number[]): IterableIterator<EventRow> {
    for (const position of positions) {
      const row = this.stmts.atPosition.get(position);
      if (row) yield row;
    }
  }

  /** `sql` with `max` as its limit, prepared once per limit (the readers use a handful: 1, 16, 500, 1,000, none). */
  private limited<P extends unknown[], R>(sql: string, max: number): Database.Statement<P, R> {
    const text = `${sql} ${limitSql(max)}`;
    let stmt = this.limitedStmts.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      if (this.limitedStmts.size > 64) this.limitedStmts.clear();
      this.limitedStmts.set(text, stmt);
    }
    return stmt as unknown as Database.Statement<P, R>;
  }

  async headPosition(): Promise<number> {
    return this.stmts.head.get()?.p ?? 0;
  }

  async deleteStream(streamName: string, options: { expectedRevision?: ExpectedRevision; hard?: boolean } = {}): Promise<void> {
    await this.commits.write(() => this.deleteInSavepoint(streamName, options.expectedRevision ?? 'any', options.hard ?? false));
  }

  /** A deletion in the group's transaction, in its place in the queue. */
  private deleteInSavepoint(streamName: string, expected: ExpectedRevision, hard: boolean): undefined {
    const stream = this.stmts.getStream.get(streamName);
    if (stream?.deleted === STREAM_TOMBSTONED) throw new StreamDeletedError(streamName);
    const live = stream && stream.deleted === 0 ? stream.revision : NO_STREAM;
    checkExpected(streamName, expected, live);
    // The stream's rows are zeroed as they go; copies of them elsewhere in the file wait for the scrub.
    if (this.stmts.deleteEvents.run(streamName).changes > 0) markForScrub(this.db, 'events');
    if (stream) this.stmts.markDeleted.run(hard ? STREAM_TOMBSTONED : STREAM_SOFT_DELETED, streamName);
    else if (hard) {
      this.stmts.upsertStream.run(streamName, NO_STREAM);
      this.stmts.markDeleted.run(STREAM_TOMBSTONED, streamName);
    }
    return undefined;
  }

  /**
   * Deleted streams' rows were zeroed as they went (secure_delete); the scrub removes the copies
   * of them that rebalancing left in live pages (a sealed data key among them would open again
   * with SEALING_KEY), and empties the log that still holds earlier images.
   */
  async purgeDeleted(): Promise<void> {
    await this.scrubber.run();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.scrubber.close();
    this.commits.close();
    this.channel?.close();
    this.tail.close();
    this.db.close();
  }
}

function checkExpected(streamName: string, expected: ExpectedRevision, live: number): void {
  const actual = live === NO_STREAM ? 'no_stream' : live;
  if (expected === 'any') return;
  if (expected === 'no_stream' && live !== NO_STREAM) throw new ConcurrencyError(streamName, expected, actual);
  if (expected === 'stream_exists' && live === NO_STREAM) throw new ConcurrencyError(streamName, expected, actual);
  if (typeof expected === 'number' && expected !== live) throw new ConcurrencyError(streamName, expected, actual);
}

function hasFilter(filter?: AllFilter): boolean {
  return !!filter && (!!filter.eventTypes?.length || !!filter.streamPrefixes?.length);
}

function isUniqueViolation(err: unknown, column: string): boolean {
  return err instanceof Error && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && err.message.includes(column);
}
