import type { Logger } from 'pino';
import type { Agent } from 'undici';
import { disableWebhookEndpoint } from '../../../commands/webhooks/disableWebhookEndpoint.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import { webhookEngineCollections } from '../../webhooks/deliveryDocs.js';
import { DeliveryDispatcher, DISPATCHER_CHECKPOINT } from './deliveryDispatcher.js';
import { LeaseKeeper, type LeaseSettings } from '../../projector/leaseKeeper.js';
import { storedPosition } from '../../projector/storedPosition.js';
import type { Fence } from '../../readstore/leases.js';
import { DeliveryWorker } from './deliveryWorker.js';
import { DEFAULT_LIMITS, type WorkerLimits } from './deliveryLimits.js';
import { DeliveryRetention, DAY_MS } from './deliveryRetention.js';
import { DeliveryWrites } from './deliveryWrites.js';
import { EndpointDirectory } from './endpointDirectory.js';
import { eventLogEnrichment } from './enrichment.js';
import { guardedAgent } from '../../shared/guardedAgent.js';
import { PRIVATE_TARGETS_HINT } from '../../../commands/webhooks/webhookFields.js';
import { RetrySchedule } from './retrySchedule.js';
import type { WebhookSecrets } from '../../webhooks/secretSealing.js';

export type WebhookEngineOptions = {
  eventStore: EventStore;
  readStore: ReadStore;
  /** Opens the endpoints' sealed signing secrets. */
  secrets: WebhookSecrets;
  allowPrivateTargets: boolean;
  /**
   * Resolves once every record view has applied the log up to `position` (or rejects after
   * `timeoutMs`): deliveries that announce records wait for it (deliveryWorker.ts, contracts §17).
   * Absent, nothing waits.
   */
  recordsReadable?: (position: number, timeoutMs: number) => Promise<void>;
  scheduleSeconds?: readonly number[];
  /** WEBHOOK_DELIVERY_RETENTION_DAYS: deliveries older than this are purged (deliveryRetention.ts). Default 30. */
  retentionDays?: number;
  limits?: Partial<WorkerLimits>;
  /** The engine's clock (tests move it to reach the 5-day disable rule). */
  now?: () => number;
  log?: Logger;
  /**
   * Several service processes: dispatching and sending run only in the process holding the
   * engine's lease (named like the dispatcher's checkpoint), so a delivery has one sender.
   */
  leases?: LeaseSettings;
};

/**
 * Webhook delivery: the dispatcher (a checkpointed subscription on the event stream that writes
 * deliveries) and the worker (signs, sends, retries, parks), sharing the endpoint directory.
 */
export class WebhookEngine {
  private readonly endpoints: EndpointDirectory;
  private readonly writes: DeliveryWrites;
  private readonly worker: DeliveryWorker;
  private readonly dispatcher: DeliveryDispatcher;
  private readonly retention: DeliveryRetention;
  private readonly http: Agent;
  private running = false;
  private keeper: LeaseKeeper | null = null;
  /** The work's start under the lease now held, run beside the renewals rather than inside them. */
  private starting: Promise<void> | null = null;

  constructor(private readonly options: WebhookEngineOptions) {
    const now = options.now ?? Date.now;
    this.endpoints = new EndpointDirectory(options.secrets);
    this.writes = new DeliveryWrites(options.readStore, options.log);
    // A refused outcome means another process holds the lease: stop sending at once, before the
    // lease keeper's next renewal notices.
    this.writes.onLost = () => this.worker.abandon();
    this.http = guardedAgent({ allowPrivateTargets: options.allowPrivateTargets, refusalHint: PRIVATE_TARGETS_HINT, connectTimeoutMs: 10_000 });
    this.worker = new DeliveryWorker({
      readStore: options.readStore,
      writes: this.writes,
      endpoints: this.endpoints,
      schedule: new RetrySchedule(options.scheduleSeconds),
      http: this.http,
      now,
      limits: { ...DEFAULT_LIMITS, ...options.limits },
      recordsReadable: options.recordsReadable,
      disableEndpoint: async (endpointId, reason) => {
        await disableWebhookEndpoint(options.eventStore, { endpointId, reason, at: new Date(now()).toISOString() });
      },
      log: options.log,
    });
    this.dispatcher = new DeliveryDispatcher(
      options.eventStore,
      options.readStore,
      this.endpoints,
      eventLogEnrichment(options.eventStore),
      async ({ deliveries, stopped }) => {
        for (const id of stopped) await this.worker.parkEndpoint(id);
        this.worker.offer(deliveries);
      },
      options.log,
      options.leases ? storedPosition(options.readStore, DISPATCHER_CHECKPOINT) : undefined,
    );
    this.retention = new DeliveryRetention({ readStore: options.readStore, retentionMs: (options.retentionDays ?? 30) * DAY_MS, now, log: options.log });
  }

  /** Declares the engine's collections (also when it does not run, so reads find them). */
  async init(): Promise<void> {
    await this.options.readStore.ensureCollections(webhookEngineCollections);
  }

  async start(): Promise<void> {
    await this.init();
    this.running = true;
    if (!this.options.leases) return this.startWork(undefined);
    this.keeper = new LeaseKeeper(this.options.leases, this.options.log);
    // The start reads the store and can take a while: it runs beside the keeper's renewals (a start
    // inside them could outlive the lease it started under). A start that fails is logged; the
    // lease stays held and its renewals go on, and the next take-over starts afresh.
    this.keeper.hold(DISPATCHER_CHECKPOINT, {
      start: (fence) => {
        this.starting = this.startWork(fence).catch((err) => this.options.log?.error({ err }, 'webhook engine failed to start under its lease'));
      },
      stop: () => this.stopHeldWork(),
    });
    await this.keeper.start();
  }

  private async stopHeldWork(): Promise<void> {
    // Lost or given up: attempts in flight are cut off before anything else (their outcomes are
    // the next holder's to write), then the start is let finish so that everything it began stops.
    if (this.running) this.worker.abandon();
    await this.starting;
    this.starting = null;
    await this.stopWork();
  }

  private async startWork(fence: Fence | undefined): Promise<void> {
    this.writes.hold(fence);
    this.dispatcher.fence = fence;
    await this.dispatcher.load();
    await this.worker.start();
    this.dispatcher.run();
    this.retention.start();
  }

  private async stopWork(): Promise<void> {
    await this.retention.stop();
    await this.dispatcher.stop();
    await this.worker.stop();
    await this.writes.close();
  }

  /**
   * Resolves once every event up to `position` was turned into deliveries (and the deliveries of
   * endpoints disabled up to there were parked): what the webhook routes answer depends on it.
   */
  async settle(position: number, timeoutMs = 30_000): Promise<void> {
    if (!this.running || position <= 0) return;
    await this.dispatcher.waiters.waitFor(position, timeoutMs);
  }

  /** Purges deliveries past the retention period as of `now` (the engine does it every ten minutes); answers how many. */
  purgeExpiredDeliveries(now?: number): Promise<number> {
    return this.retention.runOnce(now);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.keeper) await this.keeper.stop();
    else await this.stopWork();
    this.keeper = null;
    await this.http.close();
  }
}
