import type { Logger } from 'pino';
import type { DeliveryDoc } from '../../webhooks/deliveryDocs.js';

/**
 * Webhook events that tell a receiver it can read records now: `upload.finished` (contracts §17:
 * sent only when the upload's records are readable in every view) and `data.written`, which a
 * receiver answers the same way, by reading what was written.
 */
export const ANNOUNCING_RECORDS: ReadonlySet<string> = new Set(['upload.finished', 'data.written']);

/** The longest one wait lasts before it is logged and begun again (a record view stalled: its store failing, an erasure stopping it). */
const WAIT_MS = 30_000;
const AGAIN_MS = 1_000;

/** Resolves once every record view has applied the log up to `position`; rejects after `timeoutMs`. */
export type RecordsReadable = (position: number, timeoutMs: number) => Promise<void>;

/**
 * Holds back deliveries that announce records until every record view has applied the log up to
 * the event they announce (a delivery's id is that event's position). The ETL appends its finishing
 * events when the records are in the log, while the record projections (on the projector thread,
 * or in another process) may still be applying them: a receiver that read on `upload.finished`
 * found counts still short. A held delivery stays `pending` in the store, so a restart finds it
 * again and holds it again; in memory, one wait runs at a time, for the earliest held position,
 * driven by the projections' own progress (ProjectorRuntime.waitForIdle), never a poll per delivery.
 */
export class RecordsReadableGate {
  private held: DeliveryDoc[] = [];
  /** Every record view has applied the log up to here (it only grows: the log below it is read). */
  private readableAt = 0;
  private waiting = false;
  /** Bumped by reset: a wait begun before it hands nothing back. */
  private generation = 0;
  private again: NodeJS.Timeout | null = null;

  constructor(
    private readonly readable: RecordsReadable | undefined,
    /** Takes back deliveries whose records read back now. */
    private readonly release: (docs: DeliveryDoc[]) => void,
    private readonly log?: Logger,
  ) {}

  /** True when `d` must wait for its records: it is held then, and released once they read back. */
  holds(d: DeliveryDoc): boolean {
    if (!this.readable || !ANNOUNCING_RECORDS.has(d.event_type) || d.id <= this.readableAt) return false;
    this.held.push(d);
    this.wait();
    return true;
  }

  /** The held deliveries of an endpoint, no longer held (it was disabled or deleted). */
  drop(endpointId: string): DeliveryDoc[] {
    const dropped = this.held.filter((d) => d.endpoint_id === endpointId);
    this.held = this.held.filter((d) => d.endpoint_id !== endpointId);
    return dropped;
  }

  /** Forgets what it holds: the worker starts from the store again, or stops. */
  reset(): void {
    this.held = [];
    this.generation++;
    this.waiting = false;
    if (this.again) clearTimeout(this.again);
    this.again = null;
  }

  private wait(): void {
    if (this.waiting || this.again || this.held.length === 0 || !this.readable) return;
    this.waiting = true;
    const generation = this.generation;
    // A loop, not Math.min(...): the held list has no size a spread could take for granted.
    const target = this.held.reduce((min, d) => Math.min(min, d.id), Infinity);
    this.readable(target, WAIT_MS).then(
      () => {
        if (generation !== this.generation) return;
        this.waiting = false;
        this.readableAt = Math.max(this.readableAt, target);
        const ready = this.held.filter((d) => d.id <= this.readableAt);
        this.held = this.held.filter((d) => d.id > this.readableAt);
        this.release(ready);
        this.wait();
      },
      (err: unknown) => {
        if (generation !== this.generation) return;
        this.waiting = false;
        this.log?.warn({ err, position: target, held: this.held.length }, 'webhooks announcing records wait: the record views have not applied them yet');
        this.again = setTimeout(() => {
          this.again = null;
          this.wait();
        }, AGAIN_MS);
        this.again.unref();
      },
    );
  }
}
