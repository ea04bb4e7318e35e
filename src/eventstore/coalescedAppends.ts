import type { Observable } from 'rxjs';
import { transientKind } from '../shared/transientErrors.js';
import {
  appendBytes,
  MAX_APPEND_BYTES,
  MAX_STREAMS_PER_APPEND,
  type AppendResult,
  type Event,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
} from './eventStore.js';

type Waiting = StreamAppend & { resolve: (r: AppendResult) => void; reject: (err: unknown) => void };

/**
 * The appends asked for in one turn of the event loop, sent as few `appendToStreams` calls
 * (issue 37: many small ETL jobs, each with its own appends, make one write per batch instead of
 * one per job: one message to the writer thread, one savepoint, one round trip to KurrentDB).
 * Each caller is answered exactly as a lone `appendToStream` would answer it:
 *
 * - a call holds at most the port's limits (MAX_STREAMS_PER_APPEND streams, MAX_APPEND_BYTES);
 *   a stream named twice goes in the next call, which waits for the one before: appends to one
 *   stream land in the order they were asked for, across turns too (a call waits for the calls
 *   in flight on its streams);
 * - a combined call is all or nothing, so when the store refuses it (a stream's expected
 *   revision, a deleted stream, an id stored elsewhere, a limit) each of its appends is sent
 *   again alone: the others are written, and each caller gets its own answer. A replay (the same
 *   event ids) answers `replayed` in a combined call as alone;
 * - a store failing for a while (transientErrors.ts) fails every caller of the call with its
 *   error, as it would have failed each lone append: the callers retry as they would (sending
 *   again alone here could write twice what the failed call may have stored, for events without ids);
 * - a deletion, and an `appendToStreams` asked for directly, wait for the appends asked for before
 *   them: writes land in the order they were asked for, as on the store itself.
 *
 * The cost is up to one turn of the event loop (`setImmediate`) before an append is sent.
 * Reads, subscriptions and the rest go straight to the inner store. Closing it closes the inner
 * store, after the appends asked for.
 */
export class CoalescedAppends implements EventStore {
  private waiting: Waiting[] = [];
  private scheduled = false;
  /** Per stream, the call in flight that names it: the next call naming it waits for it. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(private readonly inner: EventStore) {}

  get kind() {
    return this.inner.kind;
  }

  appendToStream(streamName: string, events: readonly Event[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.waiting.push({ streamName, events, expectedRevision: options?.expectedRevision, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  async appendToStreams(requests: readonly StreamAppend[]): Promise<AppendResult[]> {
    this.flush();
    let answer!: Promise<AppendResult[]>;
    const done = this.after(
      requests.map((r) => r.streamName),
      () => (answer = this.inner.appendToStreams(requests)),
    );
    await done;
    return answer;
  }

  async deleteStream(streamName: string, options?: { expectedRevision?: ExpectedRevision; hard?: boolean }): Promise<void> {
    this.flush();
    await this.settled();
    return this.inner.deleteStream(streamName, options);
  }

  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamName, options);
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  subscribeToAll(options?: SubscribeOptions): Observable<RecordedEvent> {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  async purgeDeleted(options?: { waitMs?: number }): Promise<void> {
    this.flush();
    await this.settled();
    return this.inner.purgeDeleted?.(options);
  }

  async close(): Promise<void> {
    this.flush();
    await this.settled();
    await this.inner.close();
  }

  /** Sends what was asked for so far, in calls within the port's limits. */
  private flush(): void {
    this.scheduled = false;
    const waiting = this.waiting;
    if (waiting.length === 0) return;
    this.waiting = [];
    for (const call of callsOf(waiting, this.inner.kind)) {
      void this.after(
        call.map((w) => w.streamName),
        () => this.send(call),
      );
    }
  }

  /**
   * Runs `write` once the calls in flight on `streams` settled, and counts it in flight on them
   * until it settles. Resolves when it settled (its outcome is the caller's).
   */
  private after(streams: readonly string[], write: () => Promise<unknown>): Promise<void> {
    const before = [...new Set(streams)].map((s) => this.inFlight.get(s)).filter((p) => p !== undefined);
    const run = () => write().then(
      () => {},
      () => {},
    );
    const done = before.length === 0 ? run() : Promise.all(before).then(run);
    for (const s of streams) this.inFlight.set(s, done);
    void done.then(() => {
      for (const s of streams) if (this.inFlight.get(s) === done) this.inFlight.delete(s);
    });
    return done;
  }

  /** Every call in flight settled. */
  private async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight.values());
  }

  private async send(call: Waiting[]): Promise<void> {
    if (call.length === 1) return this.alone(call[0]!);
    let results: AppendResult[];
    try {
      results = await this.inner.appendToStreams(call.map(({ streamName, events, expectedRevision }) => ({ streamName, events, expectedRevision })));
    } catch (err) {
      if (transientKind(err)) {
        for (const w of call) w.reject(err);
        return;
      }
      // Refused as a whole: each append alone, so each caller gets the answer it would have had.
      await Promise.all(call.map((w) => this.alone(w)));
      return;
    }
    call.forEach((w, i) => w.resolve(results[i]!));
  }

  private alone(w: Waiting): Promise<void> {
    return this.inner.appendToStream(w.streamName, w.events, { expectedRevision: w.expectedRevision }).then(w.resolve, w.reject);
  }
}

/**
 * Cuts the appends of a turn into calls in the order asked: a call ends at the port's limits or
 * at a stream it names already. An append that cannot share a call (empty, over the byte limit
 * alone, or on KurrentDB with metadata its multi-stream append cannot carry) is a call of its own,
 * sent as `appendToStream` with that store's own answer.
 */
function callsOf(waiting: readonly Waiting[], kind: EventStore['kind']): Waiting[][] {
  const calls: Waiting[][] = [];
  let call: Waiting[] = [];
  let names = new Set<string>();
  let bytes = 0;
  const end = () => {
    if (call.length > 0) calls.push(call);
    call = [];
    names = new Set();
    bytes = 0;
  };
  for (const w of waiting) {
    const size = w.events.length === 0 || !carriable(w.events, kind) ? null : appendBytes(w.events);
    if (size === null || size > MAX_APPEND_BYTES) {
      // After the call before it: an earlier append to its stream may be in that call.
      end();
      calls.push([w]);
      continue;
    }
    if (names.has(w.streamName) || call.length === MAX_STREAMS_PER_APPEND || bytes + size > MAX_APPEND_BYTES) end();
    call.push(w);
    names.add(w.streamName);
    bytes += size;
  }
  end();
  return calls;
}

/** The port: on KurrentDB, a multi-stream append carries metadata with string values only. */
function carriable(events: readonly Event[], kind: EventStore['kind']): boolean {
  return kind !== 'kurrentdb' || events.every((e) => !e.metadata || Object.values(e.metadata).every((v) => typeof v === 'string'));
}
