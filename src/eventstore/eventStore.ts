import type { Observable } from 'rxjs';

/**
 * Events are plain typed objects, as in Emmett: `{type, data, metadata}`.
 * `id` is optional on append; a caller that wants retry-safe appends supplies it
 * (appends are idempotent by event id).
 */
export type Event<
  Type extends string = string,
  Data extends Record<string, unknown> = Record<string, unknown>,
  Metadata extends Record<string, unknown> = Record<string, unknown>,
> = { type: Type; data: Data; metadata?: Metadata; id?: string };

/** Distributes over a union of events, so `switch (event.type)` narrows `event.data`. */
export type RecordedEvent<E extends Event = Event> = E extends Event ? RecordedOf<E> : never;

type RecordedOf<E extends Event> = {
  id: string;
  type: E['type'];
  data: E['data'];
  metadata: NonNullable<E['metadata']> | Record<string, never>;
  streamName: string;
  /** 0-based position of the event in its stream. */
  streamRevision: number;
  /** Position in the global log; strictly increasing in commit order. */
  globalPosition: number;
  createdAt: Date;
};

/**
 * `no_stream`: the stream must not exist; `stream_exists`: it must;
 * `any`: no check; a number: the revision of the stream's last event.
 * How "no stream" is represented physically is each adapter's business.
 */
export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | number;

export type AppendResult = {
  /** Revision of the last event now in the stream. */
  nextExpectedRevision: number;
  /** Global position of the last event appended (or of the original append, on a replay). */
  lastPosition: number;
  /** True when every event id was already stored by an earlier append: nothing was written. */
  replayed: boolean;
};

/** One stream's part of an atomic append to several streams (`appendToStreams`). */
export type StreamAppend = {
  streamName: string;
  events: readonly Event[];
  /** Checked as appendToStream checks it; default `any`. */
  expectedRevision?: ExpectedRevision;
};

/**
 * Most streams one `appendToStreams` call writes. An action's own write (an upload's registration
 * and acceptance) touches a few streams; a caller with more is batching, which has other limits.
 */
export const MAX_STREAMS_PER_APPEND = 16;

export type ReadStreamOptions = {
  direction?: 'forwards' | 'backwards';
  /** Inclusive; defaults to the start (forwards) or the end (backwards). */
  fromRevision?: number;
  maxCount?: number;
};

export type AllFilter = {
  streamPrefixes?: readonly string[];
  eventTypes?: readonly string[];
};

export type ReadAllOptions = {
  /** Exclusive: events strictly after this position. `undefined` or null = from the start. */
  after?: number | null;
  maxCount?: number;
  filter?: AllFilter;
  /**
   * `'catch-up'`: the caller goes on from the last event it got with another read or a
   * subscription (a rebuild, a scan), so the answer may end before the newest matching events:
   * the store may answer from an index that trails the log by moments (KurrentDB's secondary
   * indexes). It never leaves out an event before the last one it returns. Default `'head'`:
   * every matching event up to the head of the log when the read began.
   */
  consistency?: 'head' | 'catch-up';
};

export type SubscribeOptions = {
  /** Exclusive checkpoint: the subscription delivers events strictly after it. */
  after?: number | null;
  filter?: AllFilter;
};

export interface EventStore {
  readonly kind: 'sqlite' | 'kurrentdb';
  appendToStream(
    streamName: string,
    events: readonly Event[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult>;
  /**
   * Appends to several streams at once, all or nothing: one durable write. Each stream is
   * checked, replayed and numbered as `appendToStream` does it (a stream whose events were all
   * stored before by the same ids answers `replayed` and writes nothing, the others are written);
   * the first stream that fails its expected revision (ConcurrencyError naming it) or is deleted
   * (StreamDeletedError) fails the whole call and nothing is written. Events get global positions
   * in the order of `requests`; results come in that order too. Each stream appears once, at most
   * MAX_STREAMS_PER_APPEND of them, and the size limit bounds the whole call.
   * On KurrentDB (its multi-stream append) event metadata must hold string values only.
   */
  appendToStreams(requests: readonly StreamAppend[]): Promise<AppendResult[]>;
  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Events in global order after `options.after`, at most maxCount (default 1000). */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * Catch-up subscription: every matching event after the checkpoint, in global order,
   * then live events as they are appended. Never skips or reorders.
   */
  subscribeToAll(options?: SubscribeOptions): Observable<RecordedEvent>;
  /** Position of the newest event in the log (0 when empty). Used for lag. */
  headPosition(): Promise<number>;
  /**
   * Removes a stream. `hard: true` tombstones it: it can never be written again and its
   * events are physically gone (erasure needs this).
   */
  deleteStream(streamName: string, options?: { expectedRevision?: ExpectedRevision; hard?: boolean }): Promise<void>;
  /**
   * Makes the bytes of deleted streams unreadable in the store's files, as far as the backend
   * can (erasure, docs/erasure.md): the embedded store zeroes freed pages as it deletes and here
   * folds its write-ahead log into the database and empties it; KurrentDB scavenges every node.
   * With `waitMs`, resolves only once the purge completed (throws if it did not in that time).
   */
  purgeDeleted?(options?: { waitMs?: number }): Promise<void>;
  close(): Promise<void>;
}

export class ConcurrencyError extends Error {
  readonly code = 'CONCURRENCY';
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamName}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'ConcurrencyError';
  }
}

export class StreamDeletedError extends Error {
  readonly code = 'STREAM_DELETED';
  constructor(readonly streamName: string) {
    super(`stream ${streamName} is deleted`);
    this.name = 'StreamDeletedError';
  }
}

export class IdempotencyConflictError extends Error {
  readonly code = 'IDEMPOTENCY_CONFLICT';
  constructor(readonly streamName: string, readonly eventId: string) {
    super(`event ${eventId} already stored in another stream or at another position than ${streamName}`);
    this.name = 'IdempotencyConflictError';
  }
}

/**
 * Largest append, in bytes of event types, data and metadata as JSON: KurrentDB's default
 * MaxAppendSize (1 MiB). The embedded store holds to it too, so that what works on one machine
 * works on the production backends. Record events stay far below it (the record batcher cuts
 * them at 512 KiB before sealing).
 */
export const MAX_APPEND_BYTES = 1024 * 1024;

export class EventTooLargeError extends Error {
  readonly code = 'EVENT_TOO_LARGE';
  constructor(readonly streamName: string, readonly bytes: number | null, readonly limit: number) {
    super(`append to ${streamName} is ${bytes === null ? 'over' : `${bytes} bytes, over`} the event store's limit of ${limit} bytes per append`);
    this.name = 'EventTooLargeError';
  }
}

export function appendBytes(events: readonly Event[]): number {
  let bytes = 0;
  for (const e of events) {
    bytes += Buffer.byteLength(e.type) + Buffer.byteLength(JSON.stringify(e.data));
    if (e.metadata) bytes += Buffer.byteLength(JSON.stringify(e.metadata));
  }
  return bytes;
}

/** What every adapter refuses before it writes anything: an empty append, and one over `limit` bytes. */
export function checkAppend(streamName: string, events: readonly Event[], limit = MAX_APPEND_BYTES): void {
  if (events.length === 0) throw new Error('appendToStream needs at least one event');
  const bytes = appendBytes(events);
  if (bytes > limit) throw new EventTooLargeError(streamName, bytes, limit);
}

/** What every adapter refuses in an `appendToStreams` before it writes anything; the limit bounds the whole call. */
export function checkAppends(requests: readonly StreamAppend[], limit = MAX_APPEND_BYTES): void {
  if (requests.length === 0) throw new Error('appendToStreams needs at least one stream');
  if (requests.length > MAX_STREAMS_PER_APPEND) throw new RangeError(`appendToStreams takes at most ${MAX_STREAMS_PER_APPEND} streams, got ${requests.length}`);
  const names = new Set<string>();
  let bytes = 0;
  for (const r of requests) {
    if (names.has(r.streamName)) throw new Error(`appendToStreams names stream ${r.streamName} twice`);
    names.add(r.streamName);
    if (r.events.length === 0) throw new Error(`appendToStreams needs at least one event for stream ${r.streamName}`);
    bytes += appendBytes(r.events);
  }
  if (bytes > limit) throw new EventTooLargeError([...names].join(', '), bytes, limit);
}

export function matchesFilter(filter: AllFilter | undefined, streamName: string, type: string): boolean {
  if (!filter) return true;
  if (filter.eventTypes && filter.eventTypes.length > 0 && !filter.eventTypes.includes(type)) return false;
  if (filter.streamPrefixes && filter.streamPrefixes.length > 0 && !filter.streamPrefixes.some((p) => streamName.startsWith(p))) return false;
  return true;
}
