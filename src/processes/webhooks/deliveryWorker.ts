import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { ReadStore, Scalar } from '../../readstore/readStore.js';
import { DELIVERIES, type AttemptRecord, type DeliveryDoc } from '../../webhooks/deliveryDocs.js';
import type { DeliveryWrites } from './deliveryWrites.js';
import type { EndpointDirectory } from './endpointDirectory.js';
import { SealingKeyError } from '../../crypto/sealingKeys.js';
import { postDelivery, type AttemptResult } from './httpSender.js';
import { MAX_ATTEMPTS, type RetrySchedule } from './retrySchedule.js';
import { WakeTimers } from './wakeTimers.js';
import { RecordsReadableGate, type RecordsReadable } from './recordsReadableGate.js';
import { ATTEMPTS_KEPT, UNSEALABLE_ERROR, type WorkerLimits } from './deliveryLimits.js';
import { EndpointHealth } from './endpointHealth.js';


export type WorkerDeps = {
  readStore: ReadStore;
  writes: DeliveryWrites;
  endpoints: EndpointDirectory;
  schedule: RetrySchedule;
  http: Dispatcher;
  now: () => number;
  limits: WorkerLimits;
  /** Deliveries announcing records wait for it (recordsReadableGate.ts); absent, nothing waits. */
  recordsReadable?: RecordsReadable;
  /** Disables the endpoint (appends its event); the engine's command. */
  disableEndpoint: (endpointId: string, reason: string) => Promise<void>;
  log?: Logger;
};

const OPEN = ['pending', 'running'] as const;
/** Rows read per page when looking for deliveries that came due. */
const POLL_PAGE = 2_000;
/** Due retries are looked for at least this often, whatever the timers say. */
const SAFETY_POLL_MS = 30_000;
const MIN_POLL_GAP_MS = 20;
const WINDOW_MARGIN_MS = 10_000;
/** Deliveries read per endpoint and refill: keeps each poll short on the thread that answers HTTP. */
const REFILL_PAGE = 250;

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
  private readonly health: EndpointHealth;
  /**
   * Deliveries whose attempt ended but whose outcome is not stored yet: the store still calls
   * them open, and a poll or a parking sweep must not take them for open ones.
   */
  private readonly unsettled = new Map<string, number>();
  /** Endpoints with due deliveries in the store that are not in memory yet. */
  private readonly overflowing = new Set<string>();
  /** Where each overflowing endpoint's next refill continues (next_attempt_at, _id). */
  private readonly refillFrom = new Map<string, Scalar[]>();
  /** Wakes for retries coming due: each asks for a `window` poll. */
  private readonly wakes = new WakeTimers(() => void this.poll('window'), () => this.stopped);
  private refillTimer: NodeJS.Timeout | null = null;
  private wanted: PollMode = 'refill';
  private safetyTimer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  private lastPollAt = 0;
  /** Deliveries due up to here were looked at by an earlier poll ('' before the first: everything due). */
  private horizon = '';
  private stopped = true;
  /** Aborted when the engine's lease is lost: attempts in flight stop and record nothing. */
  private cut = new AbortController();
  private readonly gate: RecordsReadableGate;

  constructor(private readonly deps: WorkerDeps) {
    this.health = new EndpointHealth(deps);
    this.gate = new RecordsReadableGate(deps.recordsReadable, (docs) => this.requeue(docs), deps.log);
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.cut = new AbortController();
    // Every attempt in flight listens on it (httpSender.ts): as many as the overall bound.
    setMaxListeners(this.deps.limits.total + 1, this.cut.signal);
    // A new holding of the lease starts from the store: what an earlier holding kept in memory may
    // have been sent and recorded by another process since.
    for (const m of [this.tracked, this.trackedPer, this.queues, this.unsettled, this.refillFrom]) m.clear();
    this.overflowing.clear();
    this.gate.reset();
    this.horizon = '';
    this.deps.writes.onStored = (batch) => {
      for (const [id, b] of this.unsettled) if (b <= batch) this.unsettled.delete(id);
    };
    await this.health.load();
    // Deliveries left pending by an endpoint disabled or deleted before a crash are parked now.
    for (const ep of this.deps.endpoints.all()) if (ep.status !== 'active') await this.parkEndpoint(ep.id);
    this.safetyTimer = setInterval(() => void this.poll('full'), SAFETY_POLL_MS);
    this.safetyTimer.unref();
    await this.poll('full');
  }

  /**
   * The lease is gone: attempts in flight are abandoned at once (their requests aborted, their
   * outcomes not written; the new holder sends those deliveries again) and nothing new starts.
   */
  abandon(): void {
    this.stopped = true;
    this.cut.abort();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.gate.reset();
    this.wakes.clear();
    if (this.refillTimer) clearTimeout(this.refillTimer);
    if (this.safetyTimer) clearInterval(this.safetyTimer);
    this.refillTimer = this.safetyTimer = null;
    await this.polling;
    await Promise.allSettled([...this.attempts]);
  }

  /** New deliveries, due now (the dispatcher's fast path). Those beyond the bound wait for a poll. */
  offer(docs: readonly DeliveryDoc[]): void {
    let overflow = false;
    // An endpoint with older due deliveries still in the store takes new ones from the store too,
    // in their order, so a backlog is never overtaken for good.
    for (const d of docs) {
      if (this.overflowing.has(d.endpoint_id) || !this.track(d)) {
        this.overflowing.add(d.endpoint_id);
        overflow = true;
      }
    }
    if (overflow) this.requestRefill();
    this.pump();
  }

  /** The endpoint was disabled or deleted: its queued and stored pending deliveries are parked. */
  async parkEndpoint(endpointId: string): Promise<void> {
    const queued = [...(this.queues.get(endpointId) ?? []), ...this.gate.drop(endpointId)];
    this.queues.delete(endpointId);
    for (const d of queued) {
      this.untrack(d);
      this.unsettled.set(d._id, this.deps.writes.nextBatch);
      this.deps.writes.set(DELIVERIES, d._id, { status: 'parked', next_attempt_at: null });
    }
    // Attempts in flight finish; a failure among them parks (the endpoint is no longer active).
    for (;;) {
      await this.deps.writes.flush();
      if (this.deps.writes.leaseLost) return;
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

  private track(d: DeliveryDoc): boolean {
    if (this.tracked.has(d._id)) return true;
    const n = this.trackedPer.get(d.endpoint_id) ?? 0;
    if (n >= this.deps.limits.queuedPerEndpoint || this.tracked.size >= this.deps.limits.queued) return false;
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
      if (!this.gate.holds(d)) this.launch(d);
    }
  }

  /** Held deliveries whose records read back now go first in their endpoints' turns. */
  private requeue(docs: readonly DeliveryDoc[]): void {
    for (const d of docs) {
      if (!this.tracked.has(d._id)) continue;
      const q = this.queues.get(d.endpoint_id);
      if (q) q.unshift(d);
      else this.queues.set(d.endpoint_id, [d]);
    }
    this.pump();
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
    const cut = this.cut.signal;
    if (cut.aborted) return;
    const ep = endpoints.get(d.endpoint_id);
    if (!ep || ep.status !== 'active') {
      writes.set(DELIVERIES, d._id, { status: 'parked', next_attempt_at: null });
      return;
    }
    const startedAt = now();
    let headers: Record<string, string>;
    try {
      // The signature carries the wall-clock time: receivers check it against theirs (replay protection).
      headers = endpoints.signer(ep.id).headers(d.event_id, new Date(), d.payload);
    } catch (err) {
      if (!(err instanceof SealingKeyError)) throw err;
      // Nothing goes out unsigned. A failed attempt on the usual schedule: started again with the
      // old key in SEALING_KEY_PREVIOUS, the instance delivers it. The operator's log says which key.
      this.deps.log?.error({ endpoint: ep.id, delivery: d.id, reason: err.message }, 'webhook signing secret does not open');
      this.record(d, { ok: false, statusCode: null, error: UNSEALABLE_ERROR, excerpt: null, durationMs: 0, retryAfterSeconds: null }, startedAt);
      return;
    }
    // Stored as running only for a slow answer: a quick one's outcome is the delivery's one write
    // after its creation (a restart sends pending and running alike again).
    const marking = setTimeout(() => writes.set(DELIVERIES, d._id, { status: 'running' }), this.deps.limits.runningAfterMs);
    // Never rejects: a failure is an AttemptResult.
    const result = await postDelivery(this.deps.http, ep.url, headers, d.payload, now, cut);
    clearTimeout(marking);
    // Cut off by a lost lease: whatever came back is not this process's to record.
    if (cut.aborted) return;
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
      this.health.succeeded(d.endpoint_id, new Date(at).toISOString());
    } else {
      this.health.failed(d.endpoint_id, entry.started_at);
      const ep = endpoints.get(d.endpoint_id);
      const active = ep?.status === 'active';
      const next = active ? schedule.nextAttemptAt(attempt, at, r.retryAfterSeconds) : null;
      if (next === null) {
        Object.assign(set, { status: 'parked', next_attempt_at: null });
        if (active && attempt >= MAX_ATTEMPTS) this.health.exhausted(d.endpoint_id, at);
      } else {
        Object.assign(set, { status: 'pending', next_attempt_at: new Date(next).toISOString() });
        this.wakeAt(next);
      }
    }
    writes.set(DELIVERIES, d._id, set);
  }

  /** Wakes for a retry due at `at` on the engine's clock. */
  private wakeAt(at: number): void {
    this.wakes.after(at - this.deps.now());
  }

  private requestPollIfOverflowing(endpointId: string): void {
    if (this.overflowing.has(endpointId)) this.requestRefill();
  }

  /** A refill of endpoints whose backlog did not fit in memory, at most every MIN_POLL_GAP_MS. */
  private requestRefill(): void {
    if (this.stopped || this.refillTimer) return;
    const gap = Math.max(0, this.lastPollAt + MIN_POLL_GAP_MS - Date.now());
    this.refillTimer = setTimeout(() => {
      this.refillTimer = null;
      void this.poll('refill');
    }, gap);
  }

  /**
   * Finds due deliveries in the store and tracks them. `refill`: endpoints whose due deliveries
   * did not all fit in memory. `window`: also what came due since the last look (retries whose time
   * came). `full`: everything due (at start, and every half minute as a safety net).
   */
  async poll(mode: PollMode = 'full'): Promise<void> {
    if (this.stopped) return;
    if (POLL_RANK[mode] > POLL_RANK[this.wanted]) this.wanted = mode;
    if (this.polling) {
      this.pollAgain = true;
      return this.polling;
    }
    this.polling = (async () => {
      do {
        this.pollAgain = false;
        const m = this.wanted;
        this.wanted = 'refill';
        this.lastPollAt = Date.now();
        try {
          await this.pollOnce(m);
        } catch (err) {
          this.deps.log?.error({ err }, 'webhook poll failed; trying again shortly');
          this.wakeAt(this.deps.now() + 1000);
        }
        this.pump();
      } while (this.pollAgain && !this.stopped);
    })().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  /**
   * A window looks at the deliveries that came due since the last look, less a margin (one index
   * range); refills read one endpoint's range each, only for endpoints with room. An endpoint at
   * its bound costs nothing here, so a dead endpoint's backlog does not slow the polls that serve
   * the others.
   */
  private async pollOnce(mode: PollMode): Promise<void> {
    const { readStore, endpoints } = this.deps;
    const now = this.deps.now();
    const nowIso = new Date(now).toISOString();
    const stopped = new Set<string>();
    if (mode !== 'refill') {
      if (mode === 'full') {
        this.horizon = '';
        this.refillFrom.clear();
      }
      // The margin covers outcomes stored a little after the look that preceded them.
      const from = this.horizon ? new Date(Date.parse(this.horizon) - WINDOW_MARGIN_MS).toISOString() : '';
      this.horizon = nowIso;
      for (let after: Scalar[] | undefined; ; ) {
        // Keys only (columns, no document parsed): a dead endpoint's due backlog is cheap to pass over.
        const page = await readStore.find<DeliveryDoc>(DELIVERIES, {
          filter: { status: { $in: [...OPEN] }, next_attempt_at: { $gt: from, $lte: nowIso } },
          sort: [['next_attempt_at', 1]],
          limit: POLL_PAGE,
          after,
          fields: ['endpoint_id', 'next_attempt_at'],
        });
        const take: string[] = [];
        const taking = new Map<string, number>();
        for (const d of page) {
          if (this.tracked.has(d._id) || this.unsettled.has(d._id)) continue;
          if (endpoints.get(d.endpoint_id)?.status !== 'active') {
            stopped.add(d.endpoint_id);
            continue;
          }
          const n = (this.trackedPer.get(d.endpoint_id) ?? 0) + (taking.get(d.endpoint_id) ?? 0);
          if (n < this.deps.limits.queuedPerEndpoint && this.tracked.size + take.length < this.deps.limits.queued) {
            take.push(d._id);
            taking.set(d.endpoint_id, (taking.get(d.endpoint_id) ?? 0) + 1);
          } else {
            // Due before the endpoint's refill position, perhaps: its refill starts over.
            this.overflowing.add(d.endpoint_id);
            this.refillFrom.delete(d.endpoint_id);
          }
        }
        for (let i = 0; i < take.length; i += 500) {
          const docs = await readStore.find<DeliveryDoc>(DELIVERIES, { filter: { _id: { $in: take.slice(i, i + 500) } } });
          for (const d of docs) if ((d.status === 'pending' || d.status === 'running') && !this.tracked.has(d._id) && !this.unsettled.has(d._id)) this.track(d);
        }
        if (page.length < POLL_PAGE || this.stopped) break;
        const last = page[page.length - 1]!;
        after = [last.next_attempt_at, last._id];
      }
    }
    for (const endpointId of stopped) await this.parkEndpoint(endpointId);
    for (const endpointId of [...this.overflowing]) {
      if (this.stopped) return;
      if (endpoints.get(endpointId)?.status !== 'active') {
        this.overflowing.delete(endpointId);
        await this.parkEndpoint(endpointId);
        continue;
      }
      const held = this.trackedPer.get(endpointId) ?? 0;
      const room = Math.min(this.deps.limits.queuedPerEndpoint - held, this.deps.limits.queued - this.tracked.size);
      if (room <= 0) continue;
      // Oldest first, from where the last refill of this endpoint ended: what lies before it is in
      // memory, finished, or found by the windows (which restart the refill when they cannot take it).
      const limit = Math.min(room, REFILL_PAGE);
      const docs = await readStore.find<DeliveryDoc>(DELIVERIES, {
        filter: { endpoint_id: endpointId, status: { $in: [...OPEN] }, next_attempt_at: { $lte: nowIso } },
        sort: [['next_attempt_at', 1]],
        limit,
        after: this.refillFrom.get(endpointId),
      });
      for (const d of docs) if (!this.tracked.has(d._id) && !this.unsettled.has(d._id)) this.track(d);
      const last = docs[docs.length - 1];
      if (last) this.refillFrom.set(endpointId, [last.next_attempt_at, last._id]);
      // A short page reached the end of what was due.
      if (docs.length < limit) {
        this.overflowing.delete(endpointId);
        this.refillFrom.delete(endpointId);
      } else this.requestRefill();
    }
    if (mode === 'full') {
      const [next] = await readStore.find<DeliveryDoc>(DELIVERIES, {
        filter: { status: 'pending', next_attempt_at: { $gt: nowIso } },
        sort: [['next_attempt_at', 1]],
        limit: 1,
        fields: ['next_attempt_at'],
      });
      if (next?.next_attempt_at) this.wakeAt(Date.parse(next.next_attempt_at));
    }
  }
}

type PollMode = 'refill' | 'window' | 'full';
const POLL_RANK: Record<PollMode, number> = { refill: 0, window: 1, full: 2 };
