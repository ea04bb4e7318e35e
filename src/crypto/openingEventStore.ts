import { concatMap, from, of, type Observable } from 'rxjs';
import { PROVIDER_DATA_ERASED, USER_ERASED } from '../catalog/eventTypes.js';
import type {
  AppendResult,
  Event,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamAppend,
  SubscribeOptions,
} from '../eventstore/eventStore.js';
import type { PersonalSealer } from './personalSealing.js';
import { needsOpening, type EventOpener } from './recordSealing.js';

/**
 * The event store as the service uses it: sealed events come out opened (record payloads,
 * recordSealing.ts; personal fields, personalSealing.ts), so evolve functions, command handlers
 * and the webhook engine stay plain and never see ciphertext or keys. Order is kept (one event
 * is opened after the other). With a sealer, appends seal the personal fields of the events
 * they carry. When an erasure event goes by, the keys this process remembers for that data are
 * forgotten at once.
 */
export class OpeningEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly opener: EventOpener,
    private readonly sealer?: PersonalSealer,
  ) {}

  get kind() {
    return this.inner.kind;
  }

  async appendToStream(streamName: string, events: readonly Event[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult> {
    return this.inner.appendToStream(streamName, this.sealer ? await this.sealer.seal(events) : events, options);
  }

  async appendToStreams(requests: readonly StreamAppend[]): Promise<AppendResult[]> {
    const sealer = this.sealer;
    if (!sealer) return this.inner.appendToStreams(requests);
    const sealed: StreamAppend[] = [];
    for (const r of requests) sealed.push({ ...r, events: await sealer.seal(r.events) });
    return this.inner.appendToStreams(sealed);
  }

  async readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.openAll(await this.inner.readStream(streamName, options));
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.openAll(await this.inner.readAll(options));
  }

  subscribeToAll(options?: SubscribeOptions): Observable<RecordedEvent> {
    return this.inner.subscribeToAll(options).pipe(concatMap((e) => (needsOpening(e) ? from(this.opener.open(e)) : of(this.seen(e)))));
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  deleteStream(streamName: string, options?: { expectedRevision?: ExpectedRevision; hard?: boolean }): Promise<void> {
    return this.inner.deleteStream(streamName, options);
  }

  purgeDeleted(options?: { waitMs?: number }): Promise<void> {
    return this.inner.purgeDeleted?.(options) ?? Promise.resolve();
  }

  /** Closing is the owner's of the inner store. */
  async close(): Promise<void> {}

  private async openAll(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    for (const e of events) out.push(await this.openOne(e));
    return out;
  }

  private async openOne(e: RecordedEvent): Promise<RecordedEvent> {
    return needsOpening(e) ? this.opener.open(e) : this.seen(e);
  }

  private seen(e: RecordedEvent): RecordedEvent {
    if (e.type === USER_ERASED || e.type === PROVIDER_DATA_ERASED) {
      const d = e.data as { user_id: string; provider?: string };
      this.opener.forget(d.user_id, e.type === PROVIDER_DATA_ERASED ? d.provider : undefined);
    }
    return e;
  }
}
