import type { Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { EventStore, RecordedEvent } from '../eventstore/eventStore.js';
import { CheckpointMismatchError, type PositionedChange, type ReadStore } from '../readstore/readStore.js';
import { LeaseLostError, type Fence } from '../readstore/leases.js';
import { deriveBatch, pushChanges, weightOf } from './batchChanges.js';
import { nextBatchLength } from './batchCut.js';
import { deadLetterChange, errorText } from './deadLetters.js';
import { PROJECTION_STALLS, type StallDoc } from './projectionStalls.js';
import { PROVIDER_DATA_ERASED, USER_ERASED } from '../catalog/eventTypes.js';
import { DEFAULT_BACKOFF, backoffDelay, transientKind, type Backoff } from '../shared/transientErrors.js';
import { EventSequencer } from './eventSequences.js';
import { PositionWaiters } from './positionWaiters.js';
import type { Projection } from './projection.js';

/**
 * Above this many buffered records (an event weighs its `records`, or 1) a runner lets go of its
 * subscription and catches up again: record events hold up to a thousand records each.
 */
const HIGH_WATER = 20_000;

/**
 * How a failing batch is retried before its failing event is dead-lettered (issue 20): the delays
 * before each retry; one attempt more than there are delays. Defaults: 1, 2, 4 and 8 seconds, so
 * a batch is tried five times over 15 seconds, then its events one by one, each up to five times.
 */
export type RetryPolicy = { delaysMs: readonly number[] };
export const DEFAULT_RETRY: RetryPolicy = { delaysMs: [1000, 2000, 4000, 8000] };

/**
 * A batch during which the projector thread died, as its parent counted it (threadedRunner.ts):
 * `count` deaths at checkpoint `at`, the batch running through `through` with `events` events.
 */
export type Suspect = { projection: string; at: number; through: number; events: number; count: number; error: string };

export type RunnerOptions = {
  maxChangesPerBatch?: number;
  onBatch?: (projection: string, position: number) => void;
  /** Told when the runner starts applying here, with its checkpoint, and when it stops (null): positionWaiters.ts `applyingHere`. */
  onApplying?: (projection: string, position: number | null) => void;
  retry?: RetryPolicy;
  /** Told before each batch is applied (the projector thread reports it, see Suspect). */
  onAttempt?: (projection: string, from: number, through: number, events: number) => void;
  /** Shared by the runners of a runtime that must apply one batch at a time (after a thread died). */
  exclusive?: BatchLock;
  /** Pauses while the store fails for a while, or while stopped on an erasure (default: 1 s doubling to 30 s). */
  stallBackoff?: Backoff;
};

/** Events that erase data: never dead-lettered, whatever fails on them (contracts §19). */
export const isErasureEvent = (e: RecordedEvent): boolean => e.type === USER_ERASED || e.type === PROVIDER_DATA_ERASED;

/** Why the runner cannot move on now: what `projections status` shows (projectionStalls.ts). */
type Stall = Pick<StallDoc, 'state' | 'kind' | 'error' | 'since' | 'retries' | 'event_position' | 'event_type'>;

/** A failure that is not counted against the batch: the store failed, or an erasure event failed every attempt. */
class Stalled extends Error {
  constructor(
    readonly stall: Pick<Stall, 'state' | 'kind' | 'event_position' | 'event_type'>,
    readonly error: unknown,
  ) {
    super(errorText(error));
  }
}

/** One batch at a time across the runners that share it. */
export class BatchLock {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const before = this.tail;
    let release!: () => void;
    this.tail = new Promise((resolve) => (release = resolve));
    await before;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/**
 * Applies one projection from its stored checkpoint. Each (re)start raises `epoch`: deliveries of
 * an earlier subscription and a flush begun before it are dropped, the buffer starts empty and
 * the next batch is expected at the checkpoint as stored, so nothing is applied twice and the
 * checkpoint never moves backwards (issue 14). Restarts are serialised.
 *
 * A batch that fails is retried from the checkpoint after the pauses of its schedule; one that failed
 * every attempt is narrowed to its events one by one, and the event that fails alone every attempt
 * is dead-lettered (deadLetters.ts): recorded with the error, in the batch that moves the checkpoint
 * past it. One bad event therefore stalls its projection for under a minute, never for good.
 *
 * Only errors of the event's own code count (contracts §19): an error of the store failing for a
 * while (busy, full, I/O, unreachable, failing over: src/shared/transientErrors.ts) retries the
 * same batch with a capped back-off for as long as it takes, and an erasure event (user.erased,
 * provider_data.erased) that failed every attempt is never dead-lettered: the projection stops on
 * it and keeps trying at the capped back-off. Either stall is logged at each step and stored for
 * `projections status` (projectionStalls.ts).
 */
export class Runner {
  private sub: Subscription | null = null;
  private buffer: RecordedEvent[] = [];
  private buffered = 0;
  /** The last event taken from the subscription: a delivery at or before it is a repeat. */
  private lastBuffered = 0;
  /** The checkpoint as this runner stored or read it: where its next batch starts. */
  private applied = 0;
  private flushing: Promise<void> | null = null;
  private restarting: Promise<void> = Promise.resolve();
  private active = false;
  private epoch = 0;
  private paused = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** The lease this runner writes under, when several processes share the store. */
  private fence: Fence | undefined;
  private readonly sequencer: EventSequencer;
  /** Consecutive failures of the batch starting at checkpoint `at` (kept across restarts). */
  private failure: { at: number; count: number } | null = null;
  /** Events up to this position are applied one per batch: a batch through it failed every attempt. */
  private isolateThrough: number | null = null;
  /** The event at this checkpoint killed the projector thread on every attempt: dead-letter it unapplied. */
  private doomed: { at: number; error: string } | null = null;
  /** While the projection cannot move on (the store failing, or an erasure that fails): shown in status. */
  private stall: Stall | null = null;
  /** Writes of the stall document, in order (a clear never overtaken by an earlier put). */
  private stallWrites: Promise<void> = Promise.resolve();
  /** A stall document may be stored: by this runner, or by an earlier run in a process that ended. */
  private stallStored = true;
  readonly waiters: PositionWaiters;

  constructor(
    private readonly p: Projection,
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly log?: Logger,
    private readonly options: RunnerOptions = {},
    observe?: () => Promise<number>,
    /** The batch this projection had under way when the projector thread last died, if any. */
    suspect?: Suspect,
  ) {
    this.waiters = new PositionWaiters(p.name, p.eventTypes, eventStore, observe);
    this.sequencer = new EventSequencer(readStore, p);
    if (suspect) {
      // Deaths count as failed attempts, like a batch that threw; a death costs every projection
      // of the thread a restart, so the batch is narrowed to single events at once.
      this.failure = { at: suspect.at, count: suspect.count };
      if (suspect.events === 1 && suspect.count >= this.attempts) this.doomed = { at: suspect.at, error: suspect.error };
      else this.isolateThrough = suspect.through;
    }
  }

  private get attempts(): number {
    return (this.options.retry ?? DEFAULT_RETRY).delaysMs.length + 1;
  }

  start(fence?: Fence): Promise<void> {
    this.active = true;
    this.fence = fence;
    return this.restart();
  }

  /** Resubscribes from the stored checkpoint with an empty buffer. */
  private restart(): Promise<void> {
    const run = async () => {
      const epoch = ++this.epoch;
      this.sub?.unsubscribe();
      this.sub = null;
      this.paused = false;
      this.buffer = [];
      this.buffered = 0;
      while (this.flushing) await this.flushing;
      if (!this.active || epoch !== this.epoch) return;
      // Another writer (a rebuild, an operator's replay) may have numbered events meanwhile.
      this.sequencer.reset();
      const cp = await this.readStore.getCheckpoint(this.p.name);
      if (!this.active || epoch !== this.epoch) return;
      if (cp?.status === 'rebuilding') {
        this.scheduleRestart(1000);
        return;
      }
      this.applied = cp?.position ?? 0;
      // One an earlier run left (its process ended while stalled), or an erasure another writer (a
      // rebuild) applied meanwhile, would be shown and waited on for ever.
      const stoppedAt = this.stall?.event_position ?? null;
      const passed = stoppedAt !== null && this.applied >= stoppedAt;
      if (this.stallStored && (!this.stall || passed)) this.clearStall();
      this.lastBuffered = this.applied;
      this.waiters.advance(this.applied);
      this.waiters.applyingHere = true;
      this.options.onApplying?.(this.p.name, this.applied);
      this.subscribe(epoch);
    };
    const next = this.restarting.then(run);
    this.restarting = next.catch(() => {});
    return next;
  }

  private subscribe(epoch: number): void {
    this.paused = false;
    this.sub = this.eventStore.subscribeToAll({ after: this.lastBuffered, filter: { eventTypes: this.p.eventTypes } }).subscribe({
      next: (e) => {
        if (epoch !== this.epoch || e.globalPosition <= this.lastBuffered) return;
        this.buffer.push(e);
        this.buffered += weightOf(e);
        this.lastBuffered = e.globalPosition;
        if (this.buffered >= HIGH_WATER) this.pause();
        this.kick();
      },
      error: (err) => {
        if (epoch !== this.epoch) return;
        this.log?.error({ err, projection: this.p.name }, 'projection subscription dropped; resubscribing from checkpoint');
        this.sub = null;
        this.scheduleRestart(1000);
      },
    });
  }

  /** Lets go of the subscription so that memory stays bounded; resubscribes once drained. */
  private pause(): void {
    this.paused = true;
    this.sub?.unsubscribe();
    this.sub = null;
  }

  private kick(): void {
    if (this.flushing || !this.active) return;
    const epoch = this.epoch;
    this.flushing = this.flush(epoch)
      .catch((err) => this.onFlushError(err, epoch))
      .finally(() => {
        this.flushing = null;
        if (!this.active || epoch !== this.epoch) return;
        if (this.buffer.length) this.kick();
        else if (this.paused && !this.retryTimer) this.subscribe(epoch);
      });
  }

  /** The events the next batch may take: one alone while isolating, else as batchCut.ts cuts them. */
  private candidates(maxChanges: number): RecordedEvent[] {
    const buffer = this.buffer;
    const first = buffer[0]!;
    const isolating = this.isolateThrough !== null && first.globalPosition <= this.isolateThrough;
    if (isolating) return [first];
    const derive = this.p.derive;
    return buffer.slice(0, nextBatchLength(buffer, maxChanges, derive ? (e) => derive.isBarrier(e) : undefined));
  }

  private async flush(epoch: number): Promise<void> {
    const maxChanges = this.options.maxChangesPerBatch ?? 2_000;
    const derive = this.p.derive;
    const current = () => this.active && epoch === this.epoch;
    while (this.buffer.length && current()) {
      if (this.doomed?.at === this.applied && isErasureEvent(this.buffer[0]!)) {
        // Never dead-lettered: it is tried again (the thread may die again; its parent restarts it).
        const e = this.buffer[0]!;
        this.noteStall(new Stalled({ state: 'stopped', kind: 'erasure', event_position: e.globalPosition, event_type: e.type }, new Error(`the projector thread died on every attempt to apply it (${this.doomed.error})`)));
        this.doomed = null;
      }
      if (this.doomed?.at === this.applied) {
        await this.deadLetter(this.buffer[0]!, new Error(`the projector thread died on every attempt to apply it (${this.doomed.error})`));
        this.doomed = null;
        continue;
      }
      const lock = this.options.exclusive;
      const batch = () => this.applyNext(maxChanges, derive, current);
      if ((lock ? await lock.run(batch) : await batch()) === 'stopped') return;
      if (!current()) return;
      // A batch ran synchronously: give requests, timers and other runners a turn before the next.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Applies the next batch, or dead-letters its event when it failed alone every attempt; throws to retry after a pause. */
  private async applyNext(maxChanges: number, derive: Projection['derive'], current: () => boolean): Promise<'applied' | 'stopped'> {
    // Waiting for the lock, the runner may have been stopped or restarted.
    if (!current() || !this.buffer.length) return 'stopped';
    const candidates = this.candidates(maxChanges);
    let n = candidates.length;
    this.options.onAttempt?.(this.p.name, this.applied, candidates[n - 1]!.globalPosition, n);
    try {
      const numbered = await this.sequencer.number(candidates);
      const evolved: PositionedChange[] = [];
      n = 0;
      while (n < candidates.length && (n === 0 || evolved.length < maxChanges)) {
        const e = candidates[n++]!;
        pushChanges(this.p, e, evolved, numbered.of(e));
      }
      const last = candidates[n - 1]!;
      // Sequence numbers first: on MongoDB they are then stored before the rows that use them.
      const changes = [...numbered.through(last.globalPosition), ...evolved];
      const erasing = candidates.slice(0, n).some(isErasureEvent);
      const batch = { projection: this.p.name, position: last.globalPosition, mode: 'live' as const, lastEventAt: last.createdAt.toISOString(), fence: this.fence, erasing };
      if (derive) {
        const interim = (c: PositionedChange[]) => this.readStore.applyBatch({ ...batch, position: this.applied, expectedPosition: this.applied, changes: c });
        if (!(await deriveBatch(this.readStore, derive, candidates.slice(0, n), changes, interim, () => !current()))) return 'stopped';
      }
      if (!current()) return 'stopped';
      await this.readStore.applyBatch({ ...batch, expectedPosition: this.applied, changes });
      this.advance(n);
    } catch (err) {
      this.sequencer.reset();
      if (!current() || err instanceof CheckpointMismatchError || err instanceof LeaseLostError) throw err;
      // The store failed for a while: retried until it answers, never counted against the events.
      const kind = transientKind(err);
      if (kind) throw new Stalled({ state: 'waiting', kind, event_position: null, event_type: null }, err);
      if (!this.failedAttempt(candidates.slice(0, Math.max(1, n)))) throw err;
      const e = this.buffer[0]!;
      if (isErasureEvent(e)) throw new Stalled({ state: 'stopped', kind: 'erasure', event_position: e.globalPosition, event_type: e.type }, err);
      await this.deadLetter(e, err);
    }
    return 'applied';
  }

  /** The checkpoint moved past the first `n` buffered events. */
  private advance(n: number): void {
    const last = this.buffer[n - 1]!;
    this.applied = last.globalPosition;
    this.failure = null;
    if (this.stall) this.clearStall();
    if (this.isolateThrough !== null && this.applied >= this.isolateThrough) this.isolateThrough = null;
    this.waiters.advance(this.applied);
    this.options.onBatch?.(this.p.name, this.applied);
    for (const e of this.buffer.splice(0, n)) this.buffered -= weightOf(e);
  }

  /**
   * Counts a failure of the batch of `events` (starting at the checkpoint). Answers true when its
   * only event has failed every attempt and goes to the dead letters; false to retry after a
   * pause (a batch of several that failed every attempt is retried one event at a time).
   */
  private failedAttempt(events: readonly RecordedEvent[]): boolean {
    if (this.failure?.at !== this.applied) this.failure = { at: this.applied, count: 0 };
    this.failure.count++;
    if (this.failure.count < this.attempts) return false;
    if (events.length === 1) return true;
    this.isolateThrough = events[events.length - 1]!.globalPosition;
    this.failure = { at: this.applied, count: 0 };
    this.log?.warn({ projection: this.p.name, from: this.applied, through: this.isolateThrough }, 'projection batch failed every attempt; applying its events one by one');
    return false;
  }

  /** Records `e` as dead-lettered and moves the checkpoint past it, in one batch. */
  private async deadLetter(e: RecordedEvent, err: unknown): Promise<void> {
    const change = deadLetterChange(this.p.name, e, err, this.attempts, new Date());
    await this.readStore.applyBatch({ projection: this.p.name, expectedPosition: this.applied, position: e.globalPosition, mode: 'live', lastEventAt: e.createdAt.toISOString(), fence: this.fence, changes: [change] });
    // The error's text only: a stack or the event's data could hold health values.
    this.log?.error(
      { projection: this.p.name, position: e.globalPosition, eventType: e.type, error: errorText(err), attempts: this.attempts },
      'projection event dead-lettered; the projection carries on after it (npm run cli -- projections dead-letters)',
    );
    this.advance(1);
  }

  private onFlushError(err: unknown, epoch: number): void {
    if (epoch !== this.epoch) return;
    // Whatever was buffered is dropped: the restart reads from the stored checkpoint.
    this.epoch++;
    this.sub?.unsubscribe();
    this.sub = null;
    this.buffer = [];
    this.buffered = 0;
    if (err instanceof LeaseLostError) {
      // Another process holds the projection now; the lease keeper stops this runner.
      this.log?.warn({ projection: this.p.name }, 'projection lease lost; leaving the projection to its new holder');
      return;
    }
    if (err instanceof CheckpointMismatchError) {
      this.log?.info({ projection: this.p.name }, 'checkpoint moved (rebuild elsewhere); restarting from the stored checkpoint');
      this.scheduleRestart(500);
      return;
    }
    const kind = err instanceof Stalled ? null : transientKind(err);
    const stalled = err instanceof Stalled ? err : kind ? new Stalled({ state: 'waiting', kind, event_position: null, event_type: null }, err) : null;
    if (stalled) {
      this.noteStall(stalled);
      this.scheduleRestart(backoffDelay(this.stall!.retries, this.options.stallBackoff ?? DEFAULT_BACKOFF));
      return;
    }
    const failures = this.failure?.at === this.applied ? this.failure.count : 0;
    this.log?.error({ projection: this.p.name, error: errorText(err), failures }, 'projection batch failed; retrying from checkpoint');
    const delays = (this.options.retry ?? DEFAULT_RETRY).delaysMs;
    // A failed batch waits its turn in the schedule (narrowing starts after the first delay); a
    // failed restart (the store unreachable) 2 s.
    this.scheduleRestart(failures > 0 ? delays[Math.min(failures, delays.length) - 1]! : this.isolateThrough !== null ? (delays[0] ?? 0) : 2000);
  }

  /** One more back-off step of a stall: logged and stored each step, so both are bounded by the back-off. */
  private noteStall(s: Stalled): void {
    const same = this.stall && this.stall.state === s.stall.state && this.stall.kind === s.stall.kind && this.stall.event_position === s.stall.event_position;
    const now = new Date().toISOString();
    this.stall = { ...s.stall, error: errorText(s.error), since: same ? this.stall!.since : now, retries: same ? this.stall!.retries + 1 : 1 };
    const stall = this.stall;
    const fields = { projection: this.p.name, position: this.applied, state: stall.state, kind: stall.kind, error: stall.error, since: stall.since, retries: stall.retries };
    if (stall.state === 'stopped') {
      this.log?.error(
        { ...fields, eventPosition: stall.event_position, eventType: stall.event_type },
        'projection stopped on an erasure event that failed on every attempt: it is never dead-lettered; retrying with back-off (projections status)',
      );
    } else this.log?.warn(fields, 'projection store failing; retrying the batch with back-off, nothing skipped (projections status)');
    const doc: StallDoc = { _id: this.p.name, projection: this.p.name, position: this.applied, ...stall, updated_at: now };
    this.stallStored = true;
    this.writeStall([{ op: 'put', collection: PROJECTION_STALLS, doc }]);
  }

  private clearStall(): void {
    const was = this.stall;
    if (was) this.log?.info({ projection: this.p.name, position: this.applied, state: was.state, since: was.since, retries: was.retries }, 'projection moving again after a stall');
    this.stall = null;
    // Known gone once the delete went through, unless a new stall began meanwhile.
    this.writeStall([{ op: 'delete', collection: PROJECTION_STALLS, id: this.p.name }], () => (this.stallStored = !!this.stall));
  }

  private writeStall(changes: Parameters<ReadStore['applyChanges']>[0], written?: () => void): void {
    // Best effort: while the store is the one failing the write fails too, and the next step tries again.
    this.stallWrites = this.stallWrites
      .then(() => this.readStore.applyChanges(changes))
      .then(written)
      .catch((err: unknown) => this.log?.debug({ projection: this.p.name, error: errorText(err) }, 'could not store the projection stall'));
  }

  private scheduleRestart(ms: number): void {
    if (!this.active || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.active) this.restart().catch((err) => this.onFlushError(err, this.epoch));
    }, ms);
  }

  async stop(): Promise<void> {
    this.active = false;
    this.waiters.applyingHere = false;
    this.options.onApplying?.(this.p.name, null);
    this.epoch++;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.sub?.unsubscribe();
    this.sub = null;
    this.buffer = [];
    this.buffered = 0;
    while (this.flushing) await this.flushing;
    await this.restarting;
    await this.stallWrites;
  }
}
