import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  ErrorType,
  FORWARDS,
  KurrentDBClient,
  START,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendRecordSizeExceededError,
  type EventData,
  type MaxAppendSizeExceededError,
  type ReadPosition,
  type ReadRevision,
  type StreamState,
  type StreamTombstonedError,
  type TransactionMaxSizeExceededError,
  type WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import { Observable } from 'rxjs';
import { checkAppend, checkAppends, ConcurrencyError, EventTooLargeError, MAX_APPEND_BYTES, StreamDeletedError, matchesFilter, type AllFilter, type AppendResult, type Event, type EventStore, type ExpectedRevision, type ReadAllOptions, type ReadStreamOptions, type RecordedEvent, type StreamAppend, type SubscribeOptions } from './eventStore.js';
import { KurrentDBAdmin, type HttpCall } from './kurrentDBAdmin.js';
import { parseConnectionString } from './kurrentDBConnection.js';
import { errorType, isTransportError, translateAccessError } from './kurrentDBErrors.js';
import { subscribeWithResume } from './kurrentDBSubscription.js';
import {
  indexFor,
  isSystemEvent,
  normalizeEventId,
  positiveBigInt,
  toActual,
  toAppendState,
  toDeleteState,
  toRecorded,
  toServerFilter,
} from './kurrentDBRecords.js';
import { KurrentDBScavenger } from './kurrentDBScavenge.js';
import { KurrentDBStreamReads } from './kurrentDBStreamReads.js';

export { EventStoreAccessError } from './kurrentDBErrors.js';

/** Every call the adapter makes on the client (the request tests hand in a stand-in with these). */
export type KurrentClient = Pick<KurrentDBClient, 'appendToStream' | 'multiStreamAppend' | 'readStream' | 'readAll' | 'subscribeToAll' | 'deleteStream' | 'tombstoneStream' | 'dispose'>;

export type KurrentDBEventStoreOptions = {
  /**
   * `EVENTSTORE_URL`, e.g. `kurrentdb://localhost:2113?tls=false`, or with security on
   * `kurrentdb://wellstream:<password>@node1:2113,node2:2113,node3:2113?tls=true&tlsCAFile=/certs/ca.crt`
   * (`esdb://` works the same).
   */
  connectionString: string;
  /** The server's MaxAppendSize, when it was changed from the default (1 MiB). */
  maxAppendBytes?: number;
  /** Stand-ins for the client and for the nodes' HTTP endpoints (tests without a server). */
  client?: KurrentClient;
  http?: HttpCall;
};

/** Largest page of one $all read. */
const MAX_PAGE = 4096;
/** How long a server that did not say its version is taken to have no secondary indexes. */
const VERSION_RETRY_MS = 60_000;
const ALREADY_DELETED = Symbol('already deleted');

/**
 * Adapter for KurrentDB (formerly EventStoreDB; 26.0 LTS, the release CI runs) on the vendor's
 * client `@kurrent/kurrentdb-client`. Everything KurrentDB-specific (bigint revisions, stream
 * states, $all positions, system streams, secondary indexes, its error classes, scavenges) is
 * translated here and in the `kurrentDB*` files beside it; nothing of it leaves them.
 *
 * Global position = commit position in $all. Each event of an append is its own committed record,
 * for which $all reports commit == prepare == the event's log position: unique per event, and
 * usable as `{commit: p, prepare: p}` to resume a read.
 */
export class KurrentDBEventStore implements EventStore {
  readonly kind = 'kurrentdb' as const;
  private readonly client: KurrentClient;
  private readonly streams: KurrentDBStreamReads;
  private readonly admin: KurrentDBAdmin;
  private readonly scavenger: KurrentDBScavenger;
  private readonly maxAppendBytes: number;
  private closed = false;
  /** Completes the live subscriptions when the store closes, like the SQLite adapter does. */
  private readonly liveSubscriptions = new Set<() => void>();
  private indexes: { usable: Promise<boolean>; askedAt: number } | null = null;

  constructor(options: KurrentDBEventStoreOptions) {
    const connection = parseConnectionString(options.connectionString);
    this.client = options.client ?? KurrentDBClient.connectionString(connection.clientConnectionString);
    this.streams = new KurrentDBStreamReads(this.client);
    this.admin = new KurrentDBAdmin(connection, options.http);
    this.scavenger = new KurrentDBScavenger(this.admin);
    this.maxAppendBytes = options.maxAppendBytes ?? MAX_APPEND_BYTES;
  }

  /**
   * Opens the store and checks, before the service takes traffic, that its user may read $all
   * (projections, waits and reactors all read it). With security on, $all is readable by
   * $admins only unless its ACL grants more: a missing right is a clear start-up error naming
   * it, not a projector failing later.
   */
  static async connect(options: KurrentDBEventStoreOptions): Promise<KurrentDBEventStore> {
    const store = new KurrentDBEventStore(options);
    try {
      await store.headPosition();
    } catch (err) {
      await store.close().catch(() => {});
      throw err;
    }
    return store;
  }

  async appendToStream(
    streamName: string,
    events: readonly Event[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    // Refused here, before any request, with the same error the embedded store gives.
    checkAppend(streamName, events, this.maxAppendBytes);
    const expected = options.expectedRevision ?? 'any';
    const streamState = toAppendState(expected);
    const ids = events.map((e) => (e.id ? normalizeEventId(e.id) : undefined));
    if (ids[0] !== undefined) {
      const replay = await this.streams.findReplay(streamName, ids, expected);
      if (replay) return replay;
    }
    const proposed = toEventData(events, ids);
    let result;
    try {
      result = await this.client.appendToStream(streamName, proposed, { streamState });
    } catch (err) {
      throw await this.translateWriteError(err, streamName, expected, false);
    }
    // Only reachable when the connection string sets throwOnAppendFailure=false.
    if (!result.success) {
      const current = result.nextExpectedRevision;
      throw new ConcurrencyError(streamName, expected, current < 0n ? 'no_stream' : Number(current));
    }
    const lastPosition = result.position ? Number(result.position.commit) : await this.streams.positionOfRevision(streamName, result.nextExpectedRevision);
    return { nextExpectedRevision: Number(result.nextExpectedRevision), lastPosition, replayed: false };
  }

  /**
   * The server's multi-stream append (KurrentDB 25.1+): one transaction over every stream. Streams
   * whose events are all stored already (the same ids) answer `replayed`, as appendToStream's
   * replays do, and only the others are sent; their expected revisions are then checked by the
   * server. The answer gives one log position for the whole transaction, so each written stream's
   * last position is read back from its last event, the position every read and subscription reports.
   */
  async appendToStreams(requests: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkAppends(requests, this.maxAppendBytes);
    for (const r of requests) {
      // The client sends metadata as the record's properties, which hold strings only.
      if (r.events.some((e) => e.metadata && Object.values(e.metadata).some((v) => typeof v !== 'string'))) {
        throw new TypeError(`appendToStreams on KurrentDB takes event metadata with string values only (stream ${r.streamName})`);
      }
    }
    const planned = requests.map((r) => {
      const expected = r.expectedRevision ?? 'any';
      const ids = r.events.map((e) => (e.id ? normalizeEventId(e.id) : undefined));
      return { r, expected, ids };
    });
    const replays = await Promise.all(planned.map((p) => (p.ids[0] !== undefined ? this.streams.findReplay(p.r.streamName, p.ids, p.expected) : null)));
    const sent = planned.filter((_, i) => !replays[i]);
    if (sent.length === 0) return replays as AppendResult[];
    let result;
    try {
      result = await this.client.multiStreamAppend(
        sent.map((p) => ({ streamName: p.r.streamName, events: toEventData(p.r.events, p.ids), expectedState: toAppendState(p.expected) })),
      );
    } catch (err) {
      throw await this.translateMultiError(err, sent);
    }
    const revisions = new Map(result.responses.map((a) => [a.streamName, a.revision]));
    const written = await Promise.all(
      sent.map(async ({ r }): Promise<AppendResult> => {
        const revision = revisions.get(r.streamName);
        if (revision === undefined) throw new Error(`KurrentDB's multi-stream append answered without stream ${r.streamName}`);
        return { nextExpectedRevision: Number(revision), lastPosition: await this.streams.positionOfRevision(r.streamName, revision), replayed: false };
      }),
    );
    return replays.map((replay) => replay ?? written.shift()!);
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    let fromRevision: ReadRevision = backwards ? END : START;
    if (options.fromRevision !== undefined) {
      if (options.fromRevision >= 0) fromRevision = BigInt(Math.trunc(options.fromRevision));
      else if (backwards) return [];
    }
    const events = await this.streams.read(streamName, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision,
      ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
    });
    return events.map(toRecorded);
  }

  /**
   * Filtered on the server: it pages through $all itself and answers only matching events, so a
   * wait for "the next event of these types" costs one request however long the log. A
   * catch-up read (`consistency: 'catch-up'`: rebuilds, scans) whose filter one of the server's
   * secondary indexes holds (one event type, or one category) reads that index instead: the
   * matching events only, without the server scanning the rest. An index trails the log by
   * moments, which such a caller allows; a read that must see up to the head scans.
   */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const maxCount = options.maxCount ?? 1000;
    if (maxCount <= 0) return [];
    const index = options.consistency === 'catch-up' ? await this.indexOf(options.filter) : null;
    try {
      return await this.readAllPages(options.after, maxCount, options.filter, index);
    } catch (err) {
      if (index && this.indexFailed(err)) return this.readAll({ ...options, consistency: 'head' });
      throw translateAccessError(err);
    }
  }

  private async readAllPages(after: number | null | undefined, maxCount: number, filter: AllFilter | undefined, index: string | null): Promise<RecordedEvent[]> {
    const serverFilter = toServerFilter(filter, index);
    const out: RecordedEvent[] = [];
    let floor = positiveBigInt(after);
    // $all reads are inclusive of fromPosition; `floor` drops what was already seen.
    let from: ReadPosition = floor === null ? START : { commit: floor, prepare: floor };
    for (;;) {
      const want = Math.min(MAX_PAGE, maxCount - out.length + 1);
      const page: AllStreamResolvedEvent[] = [];
      for await (const resolved of this.client.readAll({ fromPosition: from, maxCount: want, direction: FORWARDS, filter: serverFilter, resolveLinkTos: false })) {
        page.push(resolved);
      }
      for (const resolved of page) {
        const e = resolved.event;
        if (!e) continue;
        if (floor !== null && e.position.commit <= floor) continue;
        floor = e.position.commit;
        if (isSystemEvent(e) || !matchesFilter(filter, e.streamId, e.type)) continue;
        out.push(toRecorded(e));
        if (out.length >= maxCount) return out;
      }
      const last = page[page.length - 1]?.event;
      if (page.length < want || !last) return out;
      from = last.position;
    }
  }

  /**
   * Catch-up subscription, filtered on the server, from a secondary index when one holds the
   * filter (it delivers in log order, catching up and then live like a filtered subscription).
   * A dropped subscription is re-established from the last position delivered.
   */
  subscribeToAll(options: SubscribeOptions = {}): Observable<RecordedEvent> {
    const filter = options.filter;
    return new Observable<RecordedEvent>((subscriber) => {
      if (this.closed) {
        subscriber.complete();
        return;
      }
      let stop: (() => void) | null = null;
      let cancelled = false;
      const completeOnClose = () => {
        stop?.();
        cancelled = true;
        subscriber.complete();
      };
      this.liveSubscriptions.add(completeOnClose);
      void this.indexOf(filter).then((index) => {
        if (cancelled) return;
        stop = subscribeWithResume({
          after: positiveBigInt(options.after),
          index,
          open: (fromPosition, useIndex) =>
            this.client.subscribeToAll({ fromPosition, filter: toServerFilter(filter, useIndex ? index : null), resolveLinkTos: false }) as AllStreamSubscription,
          deliver: (e) => {
            if (!isSystemEvent(e) && matchesFilter(filter, e.streamId, e.type)) subscriber.next(toRecorded(e));
          },
          indexFailed: (err) => this.indexFailed(err),
          isClosed: () => this.closed,
          complete: () => completeOnClose(),
          fail: (err) => {
            this.liveSubscriptions.delete(completeOnClose);
            subscriber.error(translateAccessError(err));
          },
        });
      });
      return () => {
        cancelled = true;
        this.liveSubscriptions.delete(completeOnClose);
        stop?.();
      };
    });
  }

  async headPosition(): Promise<number> {
    try {
      for await (const last of this.client.readAll({ fromPosition: END, maxCount: 1, direction: BACKWARDS, resolveLinkTos: false })) {
        const commit = last.event?.position.commit ?? last.commitPosition;
        if (commit !== undefined) return Number(commit);
      }
      return 0;
    } catch (err) {
      throw translateAccessError(err);
    }
  }

  async deleteStream(streamName: string, options: { expectedRevision?: ExpectedRevision; hard?: boolean } = {}): Promise<void> {
    const expected = options.expectedRevision ?? 'any';
    const hard = options.hard === true;
    for (let attempt = 0; ; attempt++) {
      let state: StreamState;
      if (expected === 'stream_exists') {
        // Deletions take no STREAM_EXISTS: pin the current revision instead.
        const last = await this.streams.lastRevision(streamName);
        if (last === null) throw new ConcurrencyError(streamName, expected, 'no_stream');
        state = last;
      } else {
        state = toDeleteState(expected);
      }
      try {
        if (hard) await this.client.tombstoneStream(streamName, { expectedRevision: state });
        else await this.client.deleteStream(streamName, { expectedRevision: state });
        return;
      } catch (err) {
        const type = errorType(err);
        if (!hard && (type === ErrorType.STREAM_NOT_FOUND || type === ErrorType.NOT_FOUND)) {
          if (expected === 'any' || expected === 'no_stream') return;
          throw new ConcurrencyError(streamName, expected, 'no_stream');
        }
        // Someone appended between our read and the delete: the stream still exists, so retry.
        if (type === ErrorType.WRONG_EXPECTED_VERSION && expected === 'stream_exists' && attempt < 2) continue;
        const translated = await this.translateWriteError(err, streamName, expected, !hard);
        if (translated === ALREADY_DELETED) return;
        throw translated;
      }
    }
  }

  /**
   * Scavenges every node (kurrentDBScavenge.ts): the tombstoned streams' events leave the files,
   * `$all` and the secondary indexes. Returns once the scavenges started, or with `waitMs` once
   * they completed.
   */
  async purgeDeleted(options: { waitMs?: number } = {}): Promise<void> {
    await this.scavenger.purge(options.waitMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.scavenger.close();
    for (const complete of [...this.liveSubscriptions]) complete();
    await this.admin.close();
    await this.client.dispose();
  }

  /** Whether the server has the secondary index holding `filter`'s events (KurrentDB 25.1+ keeps them by default). */
  private async indexOf(filter: AllFilter | undefined): Promise<string | null> {
    const index = indexFor(filter);
    if (!index) return null;
    if (!this.indexes || (Date.now() - this.indexes.askedAt > VERSION_RETRY_MS && !(await this.indexes.usable))) {
      const usable = this.admin.serverVersion().then((v) => v !== null && atLeast(v, 25, 1), () => false);
      this.indexes = { usable, askedAt: Date.now() };
    }
    return (await this.indexes.usable) ? index : null;
  }

  /**
   * An index read refused for a reason other than the connection: the server runs without its
   * secondary indexes (`SecondaryIndexing: Enabled: false`), or the user may read $all but is not
   * in $admins, which index reads need. Reads scan from now on (a scan refused too is the error).
   */
  private indexFailed(err: unknown): boolean {
    if (isTransportError(err)) return false;
    this.indexes = { usable: Promise.resolve(false), askedAt: Number.POSITIVE_INFINITY };
    return true;
  }

  /** A multi-stream append's refusal, said as appendToStream says it, naming the stream the server named. */
  private async translateMultiError(err: unknown, sent: readonly { r: StreamAppend; expected: ExpectedRevision }[]): Promise<unknown> {
    const names = sent.map((p) => p.r.streamName);
    const type = errorType(err);
    if (type === ErrorType.TRANSACTION_MAX_SIZE_EXCEEDED) {
      const e = err as TransactionMaxSizeExceededError;
      return new EventTooLargeError(names.join(', '), e.size, e.maxSize);
    }
    if (type === ErrorType.APPEND_RECORD_SIZE_EXCEEDED) {
      const e = err as AppendRecordSizeExceededError;
      return new EventTooLargeError(e.stream, e.size, e.maxSize);
    }
    const named =
      type === ErrorType.STREAM_TOMBSTONED ? (err as StreamTombstonedError).stream
      : type === ErrorType.WRONG_EXPECTED_VERSION ? (err as WrongExpectedVersionError).streamName
      : type === ErrorType.STREAM_DELETED ? (err as { streamName?: string }).streamName
      : undefined;
    const failed = sent.find((p) => p.r.streamName === named) ?? (sent.length === 1 ? sent[0] : undefined);
    if (!failed) return translateAccessError(err);
    return this.translateWriteError(err, failed.r.streamName, failed.expected, false);
  }

  /**
   * KurrentDB answers "stream deleted" both for tombstoned streams and, with STREAM_EXISTS, for
   * soft-deleted ones; in our model a soft-deleted stream simply does not exist.
   */
  private async translateWriteError(err: unknown, streamName: string, expected: ExpectedRevision, softDelete: boolean): Promise<unknown> {
    const type = errorType(err);
    if (type === ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED) {
      // The server's MaxAppendSize is set below ours: its limit is the one that holds.
      return new EventTooLargeError(streamName, null, Number((err as MaxAppendSizeExceededError).maxAppendSize ?? this.maxAppendBytes));
    }
    if (type === ErrorType.WRONG_EXPECTED_VERSION) {
      return new ConcurrencyError(streamName, expected, toActual((err as WrongExpectedVersionError).actualState));
    }
    if (type === ErrorType.STREAM_DELETED || type === ErrorType.STREAM_TOMBSTONED) {
      if ((expected === 'stream_exists' || softDelete) && !(await this.streams.isTombstoned(streamName))) {
        // A soft delete of a soft-deleted stream is a no-op, as in the SQLite adapter.
        if (softDelete && (expected === 'any' || expected === 'no_stream')) return ALREADY_DELETED;
        return new ConcurrencyError(streamName, expected, 'no_stream');
      }
      return new StreamDeletedError(streamName);
    }
    return translateAccessError(err);
  }
}

/** Our events as the client's, with the ids given (normalised) or new ones. */
function toEventData(events: readonly Event[], ids: readonly (string | undefined)[]): EventData[] {
  return events.map((e, i) => jsonEvent({ id: ids[i] ?? randomUUID(), type: e.type, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}) }));
}

/** `26.0.3`, `25.1.0-rc.1`... compared on major and minor. */
function atLeast(version: string, major: number, minor: number): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a > major || (a === major && b >= minor);
}
