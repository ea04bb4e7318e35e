import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { ReadStore } from '../readstore/readStore.js';
import { DELIVERIES, ENDPOINT_HEALTH, type AttemptRecord, type DeliveryDoc, type EndpointHealthDoc } from './deliveryDocs.js';
import type { DeliveryWrites } from './deliveryWrites.js';
import type { EndpointDirectory } from './endpointDirectory.js';
import { postDelivery, type AttemptResult } from './httpSender.js';
import { MAX_ATTEMPTS, type RetrySchedule } from './retrySchedule.js';

/** Spec "Limits": 20 attempts kept per delivery. */
export const ATTEMPTS_KEPT = 20;
/** Spec "Limits": an endpoint that accepted nothing for 5 days is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
export const AUTO_DISABLED_REASON = 'no delivery accepted for 5 days';

export type WorkerLimits = {
  /** Attempts in flight to one endpoint: a slow endpoint holds only its own slots. */
  perEndpoint: number;
  /** Attempts in flight overall. */
  total: number;
  /** Due deliveries of one endpoint held in memory; the rest wait in the store. */
  queuedPerEndpoint: number;
};

export const DEFAULT_LIMITS: WorkerLimits = { perEndpoint: 16, total: 256, queuedPerEndpoint: 1_000 };

export type WorkerDeps = {
  readStore: ReadStore;
  writes: DeliveryWrites;
  endpoints: EndpointDirectory;
  schedule: RetrySchedule;
  http: Dispatcher;
  now: () => number;
  limits: WorkerLimits;
  /** Disables the endpoint (appends its event); the engine's command. */
  disableEndpoint: (endpointId: string, reason: string) => Promise<void>;
  log?: Logger;
};

const OPEN = ['pending', 'running'] as const;
/** Due retries are looked for at least this often, whatever the timers say. */
const SAFETY_POLL_MS = 30_000;
const MIN_POLL_GAP_MS = 20;

/**
 * Sends due deliveries: new ones handed over by the dispatcher at once, retries found in the store
 * when they come due. Attempts run under a per-endpoint and an overall bound, endpoints served in
 * turn, so one slow or dead endpoint never holds back the others.
 */
export class DeliveryWorker {
  private readonly tracked = new Map<string, DeliveryDoc>();
  private readonly trackedPer = new Map<string, number>();
  private readonly queues = new Map<string, DeliveryDoc[]>();
  private readonly inFlightPer = new Map<string, number>();
  private inFlight = 0;
  private readonly attempts = new Set<Promise<void>>();
  private readonly health = new Map<string, EndpointHealthDoc>();
  private readonly disabling = new Set<string>();
  /**
   * Deliveries whose attempt ended but whose outcome is not stored yet: the store still calls
   * them open, and a poll or a parking sweep must not take them for open ones.
   */
  private readonly unsettled = new Map<string, number>();
  /** Endpoints with due deliveries in the store that are not in memory yet. */
  private readonly overflowing = new Set<string>();
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAtMs = Infinity;
  private safetyTimer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  private lastPollAt = 0;
  private stopped = true;

  constructor(private readonly deps: WorkerDeps) {}

  async start(): Promise<void> {
    this.stopped = false;
    this.deps.writes.onStored = (batch) => {
      for (const [id, b] of this.unsettled) if (b <= batch) this.unsettled.delete(id);
    };
    for (const h of await this.deps.readStore.find<EndpointHealthDoc>(ENDPOINT_HEALTH)) this.health.set(h._id, h);
    // Deliveries left pending by an endpoint disabled or deleted before a crash are parked now.
    for (const ep of this.deps.endpoints.all()) if (ep.status !== 'active') await this.parkEndpoint(ep.id);
    this.safetyTimer = setInterval(() => void this.poll(), SAFETY_POLL_MS);
    this.safetyTimer.unref();
    await this.poll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    if (this.safetyTimer) clearInterval(this.safetyTimer);
    this.wakeTimer = this.safetyTimer = null;
    await this.polling;
    await Promise.allSettled([...this.attempts]);
  }

  /** New deliveries, due now (the dispatcher's fast path). Those beyond the bound wait for a poll. */
  offer(docs: readonly DeliveryDoc[]): void {
    let overflow = false;
    // An endpoint with older due deliveries still in the store takes new ones from the store too,
    // in their order, so a backlog is never overtaken for good.
    for (const d of docs) if (this.overflowing.has(d.endpoint_id) || !this.track(d)) overflow = true;
    if (overflow) this.requestPoll();
    this.pump();
  }

  /** The endpoint was disabled or deleted: its queued and stored pending deliveries are parked. */
  async parkEndpoint(endpointId: string): Promise<void> {
    const queued = this.queues.get(endpointId) ?? [];
    this.queues.delete(endpointId);
    for (const d of queued) {
      this.untrack(d);
      this.unsettled.set(d._id, this.deps.writes.nextBatch);
      this.deps.writes.set(DELIVERIES, d._id, { status: 'parked', next_attempt_at: null });
    }
    // Attempts in flight finish; a failure among them parks (the endpoint is no longer active).
    for (;;) {
      await this.deps.writes.flush();
      const open = await this.deps.readStore.find<DeliveryDoc>(DELIVERIES, {
        filter: { endpoint_id: endpointId, status: { $in: [...OPEN] } },
        limit: 500,
        fields: ['_id', 'status'],
      });
      const idle = open.filter((d) => !this.tracked.has(d._id) && !this.unsettled.has(d._id));
      if (idle.length === 0) break;
      for (const d of idle) this.deps.writes.set(DELIVERIES, d._id, { status: 'parked', next_attempt_at: null });
    }
    await this.deps.writes.flush();
  }

  /** Health as the engine knows it now (spec "Webhook endpoint": failing_since, last_success_at). */
  healthOf(endpointId: string): EndpointHealthDoc {
    return this.health.get(endpointId) ?? { _id: endpointId, failing_since: null, last_success_at: null };
  }

  private track(d: DeliveryDoc): boolean {
    if (this.tracked.has(d._id)) return true;
    const n = this.trackedPer.get(d.endpoint_id) ?? 0;
    if (n >= this.deps.limits.queuedPerEndpoint) return false;
    this.tracked.set(d._id, d);
    this.trackedPer.set(d.endpoint_id, n + 1);
    let q = this.queues.get(d.endpoint_id);
    if (!q) this.queues.set(d.endpoint_id, (q = []));
    q.push(d);
    return true;
  }

  private untrack(d: DeliveryDoc): void {
    if (!this.tracked.delete(d._id)) return;
    const n = (this.trackedPer.get(d.endpoint_id) ?? 1) - 1;
    if (n <= 0) this.trackedPer.delete(d.endpoint_id);
    else this.trackedPer.set(d.endpoint_id, n);
  }

  /** Starts attempts, endpoints in turn, until the bounds are reached or nothing is due. */
  private pump(): void {
    if (this.stopped) return;
    const { perEndpoint, total } = this.deps.limits;
    for (const [endpointId, q] of this.queues) {
      if (this.inFlight >= total) return;
      if (q.length === 0) {
        this.queues.delete(endpointId);
        continue;
      }
      if ((this.inFlightPer.get(endpointId) ?? 0) >= perEndpoint) continue;
      const d = q.shift()!;
      // Served last next time round: the endpoint goes to the end of the turn.
      this.queues.delete(endpointId);
      if (q.length) this.queues.set(endpointId, q);
      this.launch(d);
    }
  }

  private launch(d: DeliveryDoc): void {
    this.inFlight++;
    this.inFlightPer.set(d.endpoint_id, (this.inFlightPer.get(d.endpoint_id) ?? 0) + 1);
    const work = this.attempt(d)
      .catch((err) => this.deps.log?.error({ err, endpoint: d.endpoint_id, delivery: d.id }, 'webhook attempt failed unexpectedly'))
      .finally(() => {
        this.attempts.delete(work);
        this.inFlight--;
        const n = (this.inFlightPer.get(d.endpoint_id) ?? 1) - 1;
        if (n <= 0) this.inFlightPer.delete(d.endpoint_id);
        else this.inFlightPer.set(d.endpoint_id, n);
        this.unsettled.set(d._id, this.deps.writes.nextBatch);
        this.untrack(d);
        if ((this.trackedPer.get(d.endpoint_id) ?? 0) < this.deps.limits.queuedPerEndpoint / 2) this.requestPollIfOverflowing(d.endpoint_id);
        this.pump();
      });
    this.attempts.add(work);
  }

  private async attempt(d: DeliveryDoc): Promise<void> {
    const { endpoints, writes, now } = this.deps;
    const ep = endpoints.get(d.endpoint_id);
    if (!ep || ep.status !== 'active') {
      writes.set(DELIVERIES, d._id, { status: 'parked', next_attempt_at: null });
      return;
    }
    const startedAt = now();
    writes.set(DELIVERIES, d._id, { status: 'running' });
    // The signature carries the wall-clock time: receivers check it against theirs (replay protection).
    const headers = endpoints.signer(ep.id).headers(d.event_id, new Date(), d.payload);
    const result = await postDelivery(this.deps.http, ep.url, headers, d.payload, now);
    this.record(d, result, startedAt);
  }

  private record(d: DeliveryDoc, r: AttemptResult, startedAt: number): void {
    const { writes, now, schedule, endpoints } = this.deps;
    const attempt = d.attempts + 1;
    const entry: AttemptRecord = {
      // At most 8 attempts per delivery: this numbering is unique within the endpoint.
      id: d.id * MAX_ATTEMPTS + (attempt - 1),
      attempt,
      started_at: new Date(startedAt).toISOString(),
      duration_ms: r.durationMs,
      status_code: r.statusCode,
      error: r.error,
      response_body_excerpt: r.excerpt,
    };
    const history = [...d.attempt_history, entry].slice(-ATTEMPTS_KEPT);
    const set: Partial<DeliveryDoc> = { attempts: attempt, last_status_code: r.statusCode, last_error: r.error, attempt_history: history };
    const at = now();
    if (r.ok) {
      Object.assign(set, { status: 'done', delivered_at: new Date(at).toISOString(), next_attempt_at: null });
      this.setHealth(d.endpoint_id, { failing_since: null, last_success_at: new Date(at).toISOString() });
    } else {
      const h = this.healthOf(d.endpoint_id);
      if (h.failing_since === null) this.setHealth(d.endpoint_id, { failing_since: entry.started_at, last_success_at: h.last_success_at });
      const ep = endpoints.get(d.endpoint_id);
      const active = ep?.status === 'active';
      const next = active ? schedule.nextAttemptAt(attempt, at, r.retryAfterSeconds) : null;
      if (next === null) {
        Object.assign(set, { status: 'parked', next_attempt_at: null });
        if (active && attempt >= MAX_ATTEMPTS) this.exhausted(d.endpoint_id, at);
      } else {
        Object.assign(set, { status: 'pending', next_attempt_at: new Date(next).toISOString() });
        this.wakeAt(next);
      }
    }
    writes.set(DELIVERIES, d._id, set);
  }

  /** Spec "States: Webhook endpoint": disabled when a delivery runs out of attempts and nothing was accepted for 5 days. */
  private exhausted(endpointId: string, at: number): void {
    const ep = this.deps.endpoints.get(endpointId);
    if (!ep) return;
    const lastSuccess = this.healthOf(endpointId).last_success_at;
    const acceptingSince = Math.max(Date.parse(ep.activeSince), lastSuccess ? Date.parse(lastSuccess) : 0);
    if (at - acceptingSince < DISABLE_AFTER_MS || this.disabling.has(endpointId)) return;
    this.disabling.add(endpointId);
    this.deps
      .disableEndpoint(endpointId, AUTO_DISABLED_REASON)
      .catch((err) => this.deps.log?.error({ err, endpoint: endpointId }, 'could not disable webhook endpoint'))
      .finally(() => this.disabling.delete(endpointId));
  }

  private setHealth(endpointId: string, h: Omit<EndpointHealthDoc, '_id'>): void {
    this.health.set(endpointId, { _id: endpointId, ...h });
    this.deps.writes.set(ENDPOINT_HEALTH, endpointId, h, true);
  }

  private requestPollIfOverflowing(endpointId: string): void {
    if (this.overflowing.has(endpointId)) this.requestPoll();
  }

  private requestPoll(): void {
    const gap = this.lastPollAt + MIN_POLL_GAP_MS - Date.now();
    this.wakeAtReal(Date.now() + Math.max(0, gap));
  }

  /** Wakes for a retry due at `at` on the engine's clock. */
  private wakeAt(at: number): void {
    this.wakeAtReal(Date.now() + Math.max(0, at - this.deps.now()));
  }

  private wakeAtReal(at: number): void {
    if (this.stopped || at >= this.wakeAtMs) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAtMs = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeAtMs = Infinity;
      void this.poll();
    }, Math.min(2 ** 31 - 1, Math.max(0, at - Date.now())));
  }

  /**
   * Finds due deliveries in the store (retries come due; new ones beyond the in-memory bound;
   * deliveries left running by a crash) and sets the timer for the next one due.
   */
  async poll(): Promise<void> {
    if (this.stopped) return;
    if (this.polling) {
      this.pollAgain = true;
      return this.polling;
    }
    this.polling = (async () => {
      do {
        this.pollAgain = false;
        this.lastPollAt = Date.now();
        try {
          await this.pollOnce();
        } catch (err) {
          this.deps.log?.error({ err }, 'webhook poll failed; trying again shortly');
          this.wakeAtReal(Date.now() + 1000);
        }
        this.pump();
      } while (this.pollAgain && !this.stopped);
    })().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    const { readStore, limits, endpoints } = this.deps;
    const nowIso = new Date(this.deps.now()).toISOString();
    const due = await readStore.aggregate(DELIVERIES, {
      filter: { status: { $in: [...OPEN] }, next_attempt_at: { $lte: nowIso } },
      groupBy: ['endpoint_id'],
    });
    for (const row of due) {
      if (this.stopped) return;
      const endpointId = String(row.group.endpoint_id);
      if (endpoints.get(endpointId)?.status !== 'active') {
        await this.parkEndpoint(endpointId);
        continue;
      }
      const held = this.trackedPer.get(endpointId) ?? 0;
      const room = limits.queuedPerEndpoint - held;
      if (room <= 0) {
        this.overflowing.add(endpointId);
        continue;
      }
      const docs = await readStore.find<DeliveryDoc>(DELIVERIES, {
        filter: { endpoint_id: endpointId, status: { $in: [...OPEN] }, next_attempt_at: { $lte: nowIso } },
        sort: [['next_attempt_at', 1]],
        limit: held + room,
      });
      let added = 0;
      for (const d of docs) if (!this.tracked.has(d._id) && !this.unsettled.has(d._id) && this.track(d)) added++;
      if (row.count > held + added) this.overflowing.add(endpointId);
      else this.overflowing.delete(endpointId);
    }
    const [next] = await readStore.find<DeliveryDoc>(DELIVERIES, {
      filter: { status: 'pending', next_attempt_at: { $gt: nowIso } },
      sort: [['next_attempt_at', 1]],
      limit: 1,
      fields: ['next_attempt_at'],
    });
    if (next?.next_attempt_at) this.wakeAt(Date.parse(next.next_attempt_at));
  }
}
