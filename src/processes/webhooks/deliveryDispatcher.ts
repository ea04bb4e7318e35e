import type { Subscription } from 'rxjs';
import type { Logger } from 'pino';
import {
  evolveEndpoint,
  emptyEndpoint,
  endpointWants,
  WEBHOOK_ENDPOINT_EVENT_TYPES,
  type WebhookEndpointEvent,
  type WebhookEndpointState,
} from '../../../commands/webhooks/webhookEndpoint.js';
import type { EventStore, RecordedEvent } from '../../eventstore/eventStore.js';
import { PositionWaiters } from '../../projector/positionWaiters.js';
import { LeaseLostError, type Fence } from '../../readstore/leases.js';
import { CheckpointMismatchError, type Change, type PositionedChange, type ReadStore } from '../../readstore/readStore.js';
import { DELIVERIES, DISPATCH_ENDPOINTS, deliveryKey, subjectOf, type DeliveryDoc, type DispatchEndpointDoc } from '../../webhooks/deliveryDocs.js';
import type { EndpointDirectory } from './endpointDirectory.js';
import { testPayload, toWebhookEvent, WEBHOOK_SOURCE_TYPES, type Enrichment, type WebhookPayload } from '../../webhooks/eventCatalog.js';

export const DISPATCHER_CHECKPOINT = 'webhook-dispatcher';
const BATCH = 500;
/** Pause before reading again from the checkpoint after a failed batch or a dropped subscription. */
const RESTART_MS = 1000;

export const DISPATCHED_TYPES: readonly string[] = [...new Set<string>([...WEBHOOK_SOURCE_TYPES, ...WEBHOOK_ENDPOINT_EVENT_TYPES])];

export type Committed = {
  deliveries: DeliveryDoc[];
  /** Endpoints that stopped taking deliveries in the batch (disabled or deleted). */
  stopped: string[];
};

/**
 * The delivery engine's subscription on the event stream. It folds endpoint events into the
 * endpoint directory and turns every other event it reads into one delivery per matching active
 * endpoint of the event's tenant, written in the same transaction as its checkpoint (a batch is
 * stored whole or not at all, and an event is never skipped across restarts). Deliveries are
 * keyed by endpoint and the event's position, so an event read again (a crash, or a batch the read
 * store failed half-way, before the checkpoint moved) makes the same deliveries, not new ones.
 *
 * On every backend it reads the log the way the projections do: a catch-up subscription from its
 * own checkpoint in the read store, filtered on the server. After a failed batch it reads again
 * from that checkpoint, so nothing read but not stored is lost, and a read store restored from a
 * backup takes the dispatcher back with it. One process dispatches: the one holding the engine's
 * lease (several service processes).
 */
export class DeliveryDispatcher {
  readonly waiters: PositionWaiters;
  private sub: Subscription | null = null;
  private buffer: RecordedEvent[] = [];
  private flushing: Promise<void> | null = null;
  private stopped = true;
  private retryTimer: NodeJS.Timeout | null = null;
  private position = 0;

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly endpoints: EndpointDirectory,
    private readonly enrichment: Enrichment,
    private readonly onCommitted: (c: Committed) => Promise<void>,
    private readonly log?: Logger,
    /** Several service processes: waits follow the stored checkpoint, as another process may be dispatching. */
    observe?: () => Promise<number>,
    private readonly restartMs = RESTART_MS,
  ) {
    this.waiters = new PositionWaiters(DISPATCHER_CHECKPOINT, DISPATCHED_TYPES, eventStore, observe);
  }

  /** The lease the dispatcher writes under (several service processes); its batches are fenced by it. */
  fence: Fence | undefined;

  /** Loads the endpoints as of the checkpoint; the subscription starts with `run`. */
  async load(): Promise<void> {
    this.endpoints.clear();
    for (const doc of await this.readStore.find<DispatchEndpointDoc>(DISPATCH_ENDPOINTS)) this.endpoints.set(doc.state);
    const cp = await this.readStore.getCheckpoint(DISPATCHER_CHECKPOINT);
    this.position = cp?.position ?? 0;
    this.waiters.position = 0;
    this.waiters.advance(this.position);
  }

  run(): void {
    this.stopped = false;
    this.buffer = [];
    const onError = (err: unknown) => {
      this.log?.error({ err }, 'webhook dispatcher subscription dropped; resuming from its checkpoint');
      this.sub = null;
      this.restart(this.restartMs);
    };
    this.sub = this.eventStore.subscribeToAll({ after: this.position, filter: { eventTypes: DISPATCHED_TYPES } }).subscribe({
      next: (event) => this.receive(event),
      error: onError,
    });
  }

  private receive(event: RecordedEvent): void {
    this.buffer.push(event);
    this.kick();
  }

  private kick(): void {
    if (this.flushing || this.stopped) return;
    this.flushing = this.flush()
      .catch((err) => {
        if (!(err instanceof CheckpointMismatchError || err instanceof LeaseLostError)) this.log?.error({ err }, 'webhook dispatch batch failed; resuming from its checkpoint');
        this.sub?.unsubscribe();
        this.sub = null;
        this.buffer = [];
        // A lost lease: another process dispatches now; the lease keeper stops this one.
        if (!(err instanceof LeaseLostError)) this.restart(this.restartMs);
      })
      .finally(() => {
        this.flushing = null;
        if (this.buffer.length && !this.stopped) this.kick();
      });
  }

  private restart(ms: number): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.stopped) return;
      void (async () => {
        await this.flushing;
        await this.load();
        this.run();
      })().catch((err) => {
        this.log?.error({ err }, 'webhook dispatcher could not restart; trying again');
        this.restart(5000);
      });
    }, ms);
  }

  private async flush(): Promise<void> {
    while (this.buffer.length && !this.stopped) {
      const events = this.buffer.splice(0, BATCH);
      const committed = await this.dispatch(events);
      await this.onCommitted(committed);
      this.waiters.advance(this.position);
      // The embedded store is synchronous underneath: let requests and attempts have a turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private async dispatch(events: readonly RecordedEvent[]): Promise<Committed> {
    const changes: PositionedChange[] = [];
    const deliveries: DeliveryDoc[] = [];
    const stopped = new Set<string>();
    const changedEndpoints = new Map<string, WebhookEndpointState>();
    const push = (position: number, c: Change) => changes.push({ ...c, position, index: changes.length });
    const deliver = (event: RecordedEvent, endpoint: WebhookEndpointState, payload: WebhookPayload, body: string, replayOf: number | null) => {
      const doc: DeliveryDoc = {
        _id: deliveryKey(endpoint.id, event.globalPosition),
        id: event.globalPosition,
        endpoint_id: endpoint.id,
        tenant_id: endpoint.tenantId,
        event_id: payload.id,
        event_type: payload.type,
        status: 'pending',
        attempts: 0,
        last_status_code: null,
        last_error: null,
        next_attempt_at: event.createdAt.toISOString(),
        delivered_at: null,
        created_at: event.createdAt.toISOString(),
        replay_of: replayOf,
        payload: body,
        attempt_history: [],
        ...subjectOf(payload),
      };
      const { _id, ...fields } = doc;
      // Inserted once: read again after a crash, the same event leaves a delivery's progress alone.
      push(event.globalPosition, { op: 'update', collection: DELIVERIES, id: _id, setOnInsert: fields, upsert: true });
      deliveries.push(doc);
    };

    for (const event of events) {
      if (event.type.startsWith('webhook_endpoint.')) {
        const e = event as RecordedEvent<WebhookEndpointEvent>;
        const id = e.data.endpoint_id;
        const before = this.endpoints.get(id) ?? emptyEndpoint();
        const after = evolveEndpoint(before, e);
        if (after !== before) {
          this.endpoints.set(after);
          changedEndpoints.set(id, after);
          if (before.status === 'active' && after.status !== 'active') stopped.add(id);
          if (after.status === 'active') stopped.delete(id);
        }
        if (e.type === 'webhook_endpoint.test_requested' && after.status === 'active') {
          const payload = testPayload(e.data.event_id, id, e.data.at);
          deliver(event, after, payload, JSON.stringify(payload), null);
        }
        if (e.type === 'webhook_endpoint.replay_requested' && after.status === 'active') {
          const original = await this.readStore.get<DeliveryDoc>(DELIVERIES, deliveryKey(id, e.data.delivery_id));
          if (!original) {
            this.log?.warn({ endpoint: id, delivery: e.data.delivery_id }, 'replay of an unknown delivery skipped');
          } else {
            // Spec "Events" 4: the same event and the same body, naming the original.
            const payload = JSON.parse(original.payload) as WebhookPayload;
            deliver(event, after, payload, original.payload, original.id);
            push(event.globalPosition, { op: 'update', collection: DELIVERIES, id: original._id, set: { replayed_at: e.data.at } });
          }
        }
      }
      // A tenant without an active endpoint gets no delivery: its payload, and the log reads that
      // enrich it, are not made.
      const tenantId = (event.data as { tenant_id?: unknown }).tenant_id;
      const webhookEvent = typeof tenantId === 'string' && !this.endpoints.hasActive(tenantId) ? null : await toWebhookEvent(event, this.enrichment);
      if (webhookEvent) {
        const targets = this.endpoints.activeOf(webhookEvent.tenantId).filter((ep) => endpointWants(ep, webhookEvent.payload.type));
        if (targets.length) {
          const body = JSON.stringify(webhookEvent.payload);
          for (const ep of targets) deliver(event, ep, webhookEvent.payload, body, null);
        }
      }
    }
    const last = events[events.length - 1]!;
    for (const state of changedEndpoints.values()) push(last.globalPosition, { op: 'put', collection: DISPATCH_ENDPOINTS, doc: { _id: state.id, state } });
    await this.readStore.applyBatch({
      projection: DISPATCHER_CHECKPOINT,
      expectedPosition: this.position,
      position: last.globalPosition,
      mode: 'live',
      lastEventAt: last.createdAt.toISOString(),
      changes,
      fence: this.fence,
    });
    this.position = last.globalPosition;
    return { deliveries, stopped: [...stopped] };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.sub?.unsubscribe();
    this.sub = null;
    await this.flushing;
  }
}
