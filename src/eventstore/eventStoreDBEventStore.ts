import { randomUUID } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  ErrorType,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  persistentSubscriptionToAllSettingsFromDefaults,
  eventTypeFilter,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type CurrentRevision,
  type Direction,
  type EventData,
  type ExpectedRevision as EsdbExpectedRevision,
  type Filter,
  type ReadPosition,
  type ReadRevision,
  type RecordedEvent as EsdbRecordedEvent,
  type WrongExpectedVersionError,
} from '@eventstore/db-client';
import { Observable } from 'rxjs';
import { readAllFiltered } from './esdbFilteredRead.js';
import {
  type AckableEvent,
  checkAppendSize,
  ConcurrencyError,
  EventTooLargeError,
  MAX_APPEND_BYTES,
  IdempotencyConflictError,
  StreamDeletedError,
  matchesFilter,
  type AllFilter,
  type AppendResult,
  type Event,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
} from './eventStore.js';

export type EventStoreDBEventStoreOptions = {
  /**
   * e.g. `esdb://localhost:2113?tls=false`, or with security on
   * `esdb://wellstream:<password>@node1:2113,node2:2113,node3:2113?tls=true&tlsCAFile=/certs/ca.crt`
   */
  connectionString: string;
  /** The server's MaxAppendSize, when it was changed from the default (1 MiB). */
  maxAppendBytes?: number;
};

/** Events looked at, beyond the batch itself, when an `any`/`stream_exists` append may be a re-send. */
const REPLAY_TAIL = 64;
/** Largest page of one $all read. */
const MAX_PAGE = 4096;
const MAX_RESUBSCRIBES = 5;
const RESUBSCRIBE_BASE_MS = 250;
/** A subscription that lived this long before dropping was healthy: its drop starts a fresh retry budget. */
const STABLE_SUBSCRIPTION_MS = 30_000;
const ALREADY_DELETED = Symbol('already deleted');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type ReadRawOptions = { direction: Direction; fromRevision: ReadRevision; maxCount?: number };

/**
 * Adapter for EventStoreDB (24.10, client v6). Everything ESDB-specific (bigint revisions,
 * NO_STREAM/STREAM_EXISTS constants, $all positions, system streams, its error classes) is
 * translated here; nothing of it leaves this file.
 *
 * Global position = commit position in $all. Current servers write each event of an append as
 * its own committed record, for which $all reports commit == prepare == the event's log
 * position: unique per event, and usable as `{commit: p, prepare: p}` to resume a read.
 */
export class EventStoreDBEventStore implements EventStore {
  readonly kind = 'eventstoredb' as const;
  private readonly client: EventStoreDBClient;
  private closed = false;
  /** Completes the live subscriptions when the store closes, like the SQLite adapter does. */
  private readonly liveSubscriptions = new Set<() => void>();

  private readonly maxAppendBytes: number;

  constructor(options: EventStoreDBEventStoreOptions) {
    this.client = EventStoreDBClient.connectionString(options.connectionString);
    this.maxAppendBytes = options.maxAppendBytes ?? MAX_APPEND_BYTES;
  }

  /**
   * Opens the store and checks, before the service takes traffic, that its user may read $all
   * (projections, waits and reactors all read it). With security on, $all is readable by
   * $admins only unless its ACL grants more: a missing right is a clear start-up error naming
   * it, not a projector failing later.
   */
  static async connect(options: EventStoreDBEventStoreOptions): Promise<EventStoreDBEventStore> {
    const store = new EventStoreDBEventStore(options);
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
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    // Refused here, before any request, with the same error the embedded store gives.
    checkAppendSize(streamName, events, this.maxAppendBytes);
    const expected = options.expectedRevision ?? 'any';
    const esdbExpected = toAppendExpected(expected);
    const ids = events.map((e) => (e.id ? normalizeEventId(e.id) : undefined));
    if (ids[0] !== undefined) {
      const replay = await this.findReplay(streamName, ids, expected);
      if (replay) return replay;
    }
    const proposed: EventData[] = events.map((e, i) =>
      jsonEvent({ id: ids[i] ?? randomUUID(), type: e.type, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}) }),
    );
    let result;
    try {
      result = await this.client.appendToStream(streamName, proposed, { expectedRevision: esdbExpected });
    } catch (err) {
      throw await this.translateWriteError(err, streamName, expected, false);
    }
    // Only reachable when the connection string sets throwOnAppendFailure=false.
    if (!result.success) {
      const current = result.nextExpectedRevision;
      throw new ConcurrencyError(streamName, expected, current < 0n ? 'no_stream' : Number(current));
    }
    const lastPosition = result.position
      ? Number(result.position.commit)
      : await this.positionOfRevision(streamName, result.nextExpectedRevision);
    return { nextExpectedRevision: Number(result.nextExpectedRevision), lastPosition, replayed: false };
  }

  /**
   * Best-effort detection of a re-sent append, so that callers learn `replayed: true`. ESDB would
   * itself accept the re-send idempotently, but without saying so, and (with `any`) only while
   * the ids are in its in-memory cache. The ids are looked for where a replay would sit: right
   * after the expected revision when there is one, else among the last events of the stream.
   *
   * ESDB's idempotency is per stream: an id already stored in ANOTHER stream is not detected
   * (there is no index by event id), unlike the SQLite adapter which refuses it.
   */
  private async findReplay(
    streamName: string,
    ids: readonly (string | undefined)[],
    expected: ExpectedRevision,
  ): Promise<AppendResult | null> {
    const k = ids.length;
    let window: EsdbRecordedEvent[];
    let mayHaveEarlier = false;
    if (typeof expected === 'number') {
      window = await this.readRaw(streamName, { direction: FORWARDS, fromRevision: BigInt(expected + 1), maxCount: k });
    } else if (expected === 'no_stream') {
      window = await this.readRaw(streamName, { direction: FORWARDS, fromRevision: START, maxCount: k });
    } else {
      window = (await this.readRaw(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: k + REPLAY_TAIL })).reverse();
      mayHaveEarlier = window.length === k + REPLAY_TAIL;
    }
    let verdict = matchReplay(window, ids);
    // The tail window can cut a stored batch in two; look just before it once.
    if (verdict.kind === 'cut' && mayHaveEarlier && window[0]!.revision > 0n) {
      const earlier = await this.readRaw(streamName, { direction: BACKWARDS, fromRevision: window[0]!.revision - 1n, maxCount: k });
      window = [...earlier.reverse(), ...window];
      verdict = matchReplay(window, ids);
    }
    switch (verdict.kind) {
      case 'none':
        return null;
      case 'replay':
        return {
          nextExpectedRevision: Number(verdict.last.revision),
          lastPosition: verdict.last.position
            ? Number(verdict.last.position.commit)
            : await this.positionOfRevision(streamName, verdict.last.revision),
          replayed: true,
        };
      case 'cut':
      case 'conflict':
        throw new IdempotencyConflictError(streamName, verdict.id);
    }
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    let fromRevision: ReadRevision = backwards ? END : START;
    if (options.fromRevision !== undefined) {
      if (options.fromRevision >= 0) fromRevision = BigInt(Math.trunc(options.fromRevision));
      else if (backwards) return [];
    }
    const events = await this.readRaw(streamName, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision,
      ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
    });
    return events.map(toRecorded);
  }

  /**
   * Filtered on the server (esdbFilteredRead.ts): the server pages through $all and answers only
   * matching events, so a wait for "the next event of these types" costs one request however long
   * the log. With both filter dimensions, types go to the server and prefixes are checked here.
   */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const maxCount = options.maxCount ?? 1000;
    if (maxCount <= 0) return [];
    const filter = options.filter;
    const serverFilter = toServerFilter(filter);
    const out: RecordedEvent[] = [];
    let floor = positiveBigInt(options.after);
    // $all reads are inclusive of fromPosition; `floor` drops what was already seen.
    let from: ReadPosition = floor === null ? START : { commit: floor, prepare: floor };
    for (;;) {
      const want = Math.min(MAX_PAGE, maxCount - out.length + 1);
      const page = await this.readAllFilteredPage(from, want, serverFilter);
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

  subscribeToAll(options: SubscribeOptions = {}): Observable<RecordedEvent> {
    const filter = options.filter;
    const serverFilter = toServerFilter(filter);
    return new Observable<RecordedEvent>((subscriber) => {
      if (this.closed) {
        subscriber.complete();
        return;
      }
      // ESDB does not restore a dropped subscription; we resume from the last position seen.
      let cursor = positiveBigInt(options.after);
      let current: AllStreamSubscription | null = null;
      let retryTimer: ReturnType<typeof setTimeout> | undefined;
      let failures = 0;
      let stopped = false;

      const stop = () => {
        stopped = true;
        clearTimeout(retryTimer);
        this.liveSubscriptions.delete(completeOnClose);
        const sub = current;
        current = null;
        if (sub) void sub.unsubscribe().catch(() => {});
      };
      const completeOnClose = () => {
        stop();
        subscriber.complete();
      };

      const connect = () => {
        if (stopped) return;
        let sub: AllStreamSubscription;
        try {
          sub = this.client.subscribeToAll({
            fromPosition: cursor === null ? START : { commit: cursor, prepare: cursor },
            filter: serverFilter,
          });
        } catch (err) {
          stop();
          subscriber.error(translateAccessError(err));
          return;
        }
        current = sub;
        const startedAt = Date.now();
        let progressed = false;

        sub.on('data', (resolved: AllStreamResolvedEvent) => {
          if (current !== sub) return;
          const e = resolved.event;
          if (!e) return;
          // Drops the checkpoint event itself and anything re-sent after a resubscription.
          if (cursor !== null && e.position.commit <= cursor) return;
          cursor = e.position.commit;
          progressed = true;
          if (isSystemEvent(e) || !matchesFilter(filter, e.streamId, e.type)) return;
          subscriber.next(toRecorded(e));
        });

        const dropped = (err?: unknown) => {
          if (current !== sub) return;
          current = null;
          void sub.unsubscribe().catch(() => {});
          if (this.closed) {
            completeOnClose();
            return;
          }
          if (progressed || Date.now() - startedAt >= STABLE_SUBSCRIPTION_MS) failures = 0;
          failures += 1;
          if (failures > MAX_RESUBSCRIBES) {
            stop();
            subscriber.error(err ? translateAccessError(err) : new Error('EventStoreDB subscription to $all ended'));
            return;
          }
          retryTimer = setTimeout(connect, RESUBSCRIBE_BASE_MS * 2 ** (failures - 1));
        };
        // Our own unsubscribe cancels the call; the client swallows that cancellation, and
        // `current !== sub` ignores whatever else follows it.
        sub.on('error', (err: Error) => dropped(err));
        sub.on('end', () => dropped());
        sub.on('close', () => dropped());
      };

      this.liveSubscriptions.add(completeOnClose);
      connect();
      return stop;
    });
  }

  /**
   * A persistent subscription to $all for `group`, filtered on the server, created on first use
   * (starting after `after`). At most one consumer holds it at a time, so of several processes
   * one consumes and the others are refused until it lets go; the server keeps the position.
   */
  subscribePersistent(group: string, options: { filter: AllFilter; after?: number | null }): Observable<AckableEvent> {
    const filter = options.filter;
    return new Observable<AckableEvent>((subscriber) => {
      if (this.closed) {
        subscriber.complete();
        return;
      }
      let stopped = false;
      let sub: ReturnType<EventStoreDBClient['subscribeToPersistentSubscriptionToAll']> | null = null;
      const stop = () => {
        stopped = true;
        this.liveSubscriptions.delete(completeOnClose);
        const s = sub;
        sub = null;
        if (s) void s.unsubscribe().catch(() => {});
      };
      const completeOnClose = () => {
        stop();
        subscriber.complete();
      };
      this.liveSubscriptions.add(completeOnClose);
      const after = positiveBigInt(options.after);
      void (async () => {
        try {
          await this.client.createPersistentSubscriptionToAll(
            group,
            persistentSubscriptionToAllSettingsFromDefaults({
              startFrom: after === null ? START : { commit: after, prepare: after },
              maxSubscriberCount: 1,
              consumerStrategyName: 'DispatchToSingle',
              messageTimeout: 60_000,
            }),
            { filter: toServerFilter(filter) },
          );
        } catch (err) {
          if (errorType(err) !== ErrorType.PERSISTENT_SUBSCRIPTION_EXISTS) throw err;
        }
        if (stopped) return;
        const s = this.client.subscribeToPersistentSubscriptionToAll(group, { bufferSize: 500 });
        sub = s;
        s.on('data', (resolved) => {
          const e = resolved.event;
          if (!e || stopped) return;
          if (isSystemEvent(e) || !matchesFilter(filter, e.streamId, e.type)) {
            void s.ack(resolved).catch(() => {});
            return;
          }
          subscriber.next({ event: toRecorded(e), ack: () => s.ack(resolved) });
        });
        const dropped = (err?: unknown) => {
          if (stopped) return;
          stop();
          if (this.closed) subscriber.complete();
          else subscriber.error(err ?? new Error(`persistent subscription ${group} ended`));
        };
        s.on('error', (err: Error) => dropped(err));
        s.on('end', () => dropped());
        s.on('close', () => dropped());
      })().catch((err) => {
        stop();
        subscriber.error(err);
      });
      return stop;
    });
  }

  async headPosition(): Promise<number> {
    const [last] = await this.readAllPage(END, 1, BACKWARDS);
    const commit = last?.event?.position.commit ?? last?.commitPosition;
    return commit === undefined ? 0 : Number(commit);
  }

  async deleteStream(streamName: string, options: { expectedRevision?: ExpectedRevision; hard?: boolean } = {}): Promise<void> {
    const expected = options.expectedRevision ?? 'any';
    const hard = options.hard === true;
    for (let attempt = 0; ; attempt++) {
      let esdbExpected: EsdbExpectedRevision;
      if (expected === 'stream_exists') {
        // ESDB deletes take no STREAM_EXISTS: pin the current revision instead.
        const last = await this.lastRevision(streamName);
        if (last === null) throw new ConcurrencyError(streamName, expected, 'no_stream');
        esdbExpected = last;
      } else {
        esdbExpected = toDeleteExpected(expected);
      }
      try {
        if (hard) await this.client.tombstoneStream(streamName, { expectedRevision: esdbExpected });
        else await this.client.deleteStream(streamName, { expectedRevision: esdbExpected });
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
   * Starts a scavenge: the server rewrites its completed chunks without the events of tombstoned
   * streams (erasure, docs/erasure.md). The v6 client has no operations API; its own HTTP channel
   * (leader discovery, credentials, TLS) reaches the admin route. One already running is enough.
   */
  async purgeDeleted(): Promise<void> {
    const client = this.client as unknown as { HTTPRequest: (method: 'POST', path: string, options: Record<string, never>) => Promise<unknown> };
    try {
      await client.HTTPRequest('POST', '/admin/scavenge', {});
    } catch (err) {
      if (err instanceof Error && /already|in progress|running/i.test(err.message)) return;
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const complete of [...this.liveSubscriptions]) complete();
    await this.client.dispose();
  }

  /** Stream read as ESDB records: a missing (or soft-deleted) stream is empty, a tombstoned one throws ours. */
  private async readRaw(streamName: string, options: ReadRawOptions): Promise<EsdbRecordedEvent[]> {
    const out: EsdbRecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamName, {
        direction: options.direction,
        fromRevision: options.fromRevision,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) if (resolved.event) out.push(resolved.event);
    } catch (err) {
      const type = errorType(err);
      if (type === ErrorType.STREAM_NOT_FOUND) return [];
      if (type === ErrorType.STREAM_DELETED) throw new StreamDeletedError(streamName);
      throw err;
    }
    return out;
  }

  private async readAllPage(fromPosition: ReadPosition, maxCount: number, direction: Direction): Promise<AllStreamResolvedEvent[]> {
    const out: AllStreamResolvedEvent[] = [];
    try {
      for await (const resolved of this.client.readAll({ fromPosition, maxCount, direction })) out.push(resolved);
    } catch (err) {
      throw translateAccessError(err);
    }
    return out;
  }

  private async readAllFilteredPage(fromPosition: ReadPosition, maxCount: number, filter: Filter): Promise<AllStreamResolvedEvent[]> {
    try {
      return await readAllFiltered(this.client, { fromPosition, maxCount, filter });
    } catch (err) {
      throw translateAccessError(err);
    }
  }

  private async lastRevision(streamName: string): Promise<bigint | null> {
    const [last] = await this.readRaw(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
    return last ? last.revision : null;
  }

  /** Old servers leave the position out of append results. */
  private async positionOfRevision(streamName: string, revision: bigint): Promise<number> {
    const [e] = await this.readRaw(streamName, { direction: BACKWARDS, fromRevision: revision, maxCount: 1 });
    return e?.position ? Number(e.position.commit) : 0;
  }

  private async isTombstoned(streamName: string): Promise<boolean> {
    try {
      await this.readRaw(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
      return false;
    } catch (err) {
      return err instanceof StreamDeletedError;
    }
  }

  /**
   * ESDB answers "stream deleted" both for tombstoned streams and, with STREAM_EXISTS, for
   * soft-deleted ones; in our model a soft-deleted stream simply does not exist.
   */
  private async translateWriteError(err: unknown, streamName: string, expected: ExpectedRevision, softDelete: boolean): Promise<unknown> {
    const type = errorType(err);
    if (type === ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED) {
      // The server's MaxAppendSize is set below ours: its limit is the one that holds.
      return new EventTooLargeError(streamName, null, Number((err as { maxAppendSize?: number }).maxAppendSize ?? this.maxAppendBytes));
    }
    if (type === ErrorType.WRONG_EXPECTED_VERSION) {
      return new ConcurrencyError(streamName, expected, toActual((err as WrongExpectedVersionError).actualVersion));
    }
    if (type === ErrorType.STREAM_DELETED) {
      if ((expected === 'stream_exists' || softDelete) && !(await this.isTombstoned(streamName))) {
        // A soft delete of a soft-deleted stream is a no-op, as in the SQLite adapter.
        if (softDelete && (expected === 'any' || expected === 'no_stream')) return ALREADY_DELETED;
        return new ConcurrencyError(streamName, expected, 'no_stream');
      }
      return new StreamDeletedError(streamName);
    }
    return err;
  }
}

type ReplayVerdict =
  | { kind: 'none' }
  | { kind: 'replay'; last: EsdbRecordedEvent }
  | { kind: 'conflict'; id: string }
  /** Some ids sit at the very start of the window: the batch may begin before it. */
  | { kind: 'cut'; id: string };

/** `window` is consecutive events of one stream in ascending revision order. */
function matchReplay(window: readonly EsdbRecordedEvent[], ids: readonly (string | undefined)[]): ReplayVerdict {
  const at = new Map<string, number>();
  window.forEach((e, i) => at.set(e.id.toLowerCase(), i));
  const start = at.get(ids[0]!);
  if (start === undefined) {
    for (let i = 1; i < ids.length; i++) {
      const found = ids[i] === undefined ? undefined : at.get(ids[i]!);
      if (found !== undefined) return found < i ? { kind: 'cut', id: ids[i]! } : { kind: 'conflict', id: ids[i]! };
    }
    return { kind: 'none' };
  }
  for (let i = 0; i < ids.length; i++) {
    const stored = window[start + i];
    if (ids[i] === undefined || !stored || stored.id.toLowerCase() !== ids[i]) return { kind: 'conflict', id: ids[i] ?? '' };
  }
  return { kind: 'replay', last: window[start + ids.length - 1]! };
}

function normalizeEventId(id: string): string {
  // ESDB stores ids as UUIDs and hands them back lower-case.
  if (!UUID.test(id)) throw new TypeError(`EventStoreDB event ids must be UUIDs, got "${id}"`);
  return id.toLowerCase();
}

function toRevision(n: number): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`expected revision must be a non-negative integer, got ${n}`);
  return BigInt(n);
}

function toAppendExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return STREAM_EXISTS;
  return toRevision(expected);
}

function toDeleteExpected(expected: Exclude<ExpectedRevision, 'stream_exists'>): EsdbExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  return toRevision(expected);
}

function toActual(current: CurrentRevision | undefined): number | 'no_stream' {
  return typeof current === 'bigint' && current >= 0n ? Number(current) : 'no_stream';
}

/** By the client's `type` tag rather than instanceof, which a second copy of the client would break. */
function errorType(err: unknown): string | undefined {
  const type = err instanceof Error ? (err as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : undefined;
}

/** Reads of $all refused for want of rights, said in the words an operator acts on. */
export class EventStoreAccessError extends Error {
  readonly code = 'EVENTSTORE_ACCESS_DENIED';
  constructor(cause: unknown) {
    super(
      'EventStoreDB refused to let this service read $all (wrong credentials, or a user without the right). ' +
        'Connect as a user in the $admins group, or grant the ' +
        "user read on $all (the $acl of the stream $$all's metadata) and membership of $ops (scavenges for erasure); " +
        'put the credentials in EVENTSTORE_URL (esdb://user:password@host:2113?tls=true).',
      { cause },
    );
    this.name = 'EventStoreAccessError';
  }
}

function translateAccessError(err: unknown): unknown {
  const type = errorType(err);
  return type === ErrorType.ACCESS_DENIED ? new EventStoreAccessError(err) : err;
}

function positiveBigInt(n: number | null | undefined): bigint | null {
  return n !== null && n !== undefined && n > 0 ? BigInt(Math.trunc(n)) : null;
}

/**
 * ESDB filters on one dimension only; with both given, types go to the server and prefixes are
 * checked here (matchesFilter is applied to every delivered event anyway).
 */
function toServerFilter(filter?: AllFilter): Filter {
  if (filter?.eventTypes?.length) return eventTypeFilter({ regex: `^(?:${filter.eventTypes.map(escapeRegex).join('|')})$` });
  if (filter?.streamPrefixes?.length) return streamNameFilter({ prefixes: [...filter.streamPrefixes] });
  // Without a filter the server would also send every system event ($stats, $metadata, links...).
  return eventTypeFilter({ regex: '^[^$]' });
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isSystemEvent(e: { type: string; streamId: string }): boolean {
  return e.type.startsWith('$') || e.streamId.startsWith('$');
}

function toRecorded(e: EsdbRecordedEvent): RecordedEvent {
  return {
    id: e.id,
    type: e.type,
    data: asRecord(e.data),
    metadata: asRecord(e.metadata),
    streamName: e.streamId,
    streamRevision: Number(e.revision),
    // Servers before 22.6 do not report positions on stream reads.
    globalPosition: e.position ? Number(e.position.commit) : 0,
    createdAt: new Date(e.created),
  };
}

/** Events written by other tools may carry binary or non-object JSON payloads. */
function asRecord(value: unknown): Record<string, unknown> {
  let v = value;
  if (v instanceof Uint8Array) {
    if (v.length === 0) return {};
    try {
      v = JSON.parse(Buffer.from(v).toString('utf8'));
    } catch {
      return { raw: Buffer.from(value as Uint8Array).toString('base64') };
    }
  }
  if (v === undefined || v === null) return {};
  if (typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  return { value: v };
}

