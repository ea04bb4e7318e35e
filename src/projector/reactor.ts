import type { Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { Event, EventStore, RecordedEvent } from '../eventstore/eventStore.js';
import { CheckpointMismatchError, type ReadStore } from '../readstore/readStore.js';
import { LeaseLostError, type Fence } from '../readstore/leases.js';
import { LeaseKeeper, type LeaseSettings } from './leaseKeeper.js';
import { backoffDelay, transientKind, type Backoff } from '../shared/transientErrors.js';

/**
 * A reactor turns events into further commands (a process manager). Unlike a projection it has
 * side effects, so its handler must be idempotent: the runtime delivers at least once and
 * resumes from the last saved checkpoint after a crash.
 */
export type Reactor<E extends Event = Event> = {
  name: string;
  eventTypes: readonly E['type'][];
  handle: (event: RecordedEvent<E>) => Promise<void>;
  /**
   * Events handled at once, at most (default 1: one after another, the checkpoint moved past
   * each). A reactor whose handling of one event does not depend on another's having finished
   * takes the events that arrived while it was busy together: their handlers start in log order
   * in one turn (writes asked for in one turn share a store's group commit) and the checkpoint
   * moves once, past the last of them, when every one is handled.
   */
  together?: number;
};

export function defineReactor<E extends Event>(r: Reactor<E>): Reactor {
  return r as unknown as Reactor;
}

const checkpointName = (r: Reactor) => `reactor:${r.name}`;

/** One run of a reactor; `sub` is null while `subscribe()` is still delivering the events already in the log. */
type Running = { sub: Subscription | null; fence: Fence | undefined; position: number };

/**
 * Failures of one event in a row before it is dead-lettered (with `deadLetter`) or the reactor
 * restarts. Failures of a store for a while (src/shared/transientErrors.ts) do not count: they are
 * retried with a capped back-off until the store answers (contracts §19).
 */
export const REACTOR_ATTEMPTS = 5;

/**
 * Sets an event a reactor could not handle aside (issue 26: a `reactor.<name>` job on the work
 * queue, where an operator lists and replays it), so the reactor moves on to the next event.
 */
export type ReactorDeadLetter = (reactor: Reactor, event: RecordedEvent, error: string) => Promise<void>;

/**
 * Runs reactors from their checkpoints. A handler that fails REACTOR_ATTEMPTS times on one event
 * has the event dead-lettered (`deadLetter`) and the reactor goes on; without one, the reactor
 * restarts from its checkpoint. With `leases` (several service processes) each reactor
 * runs only in the process holding its lease (named like its checkpoint), and its checkpoint
 * advances by a fenced, conditional write: a process that lost the lease cannot move it, and it
 * never moves backwards.
 */
export class ReactorRuntime {
  private readonly running = new Map<string, Running>();
  private stopped = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private keeper: LeaseKeeper | null = null;

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly reactors: readonly Reactor[],
    private readonly log?: Logger,
    private readonly leases?: LeaseSettings,
    private readonly deadLetter?: ReactorDeadLetter,
    private readonly pauseMs = 200,
    /** Pauses while a store fails for a while (default: from 2 × pauseMs, doubling to 30 s). */
    private readonly stallBackoff: Backoff = { firstMs: pauseMs * 2, maxMs: 30_000 },
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    if (!this.leases) {
      for (const r of this.reactors) await this.run(r, undefined);
      return;
    }
    this.keeper = new LeaseKeeper(this.leases, this.log);
    for (const r of this.reactors) this.keeper.hold(checkpointName(r), { start: (fence) => this.run(r, fence), stop: () => this.halt(r) });
    await this.keeper.start();
  }

  private async run(r: Reactor, fence: Fence | undefined): Promise<void> {
    if (this.stopped) return;
    await this.halt(r);
    const cp = await this.readStore.getCheckpoint(checkpointName(r));
    const state: Running = { sub: null, fence, position: cp?.position ?? 0 };
    // Registered before subscribing: a store may deliver the events already past the checkpoint
    // synchronously, inside subscribe() (the embedded one does), and an event that finds another
    // run registered is dropped. Registered after, the first of them was dropped and the next one
    // moved the checkpoint past it.
    this.running.set(r.name, state);
    const stop = (err: unknown) => {
      if (this.running.get(r.name) !== state) return;
      this.running.delete(r.name);
      state.sub?.unsubscribe();
      if (err instanceof LeaseLostError) {
        this.log?.warn({ reactor: r.name }, 'reactor lease lost; leaving it to its new holder');
        return;
      }
      this.log?.error({ err, reactor: r.name }, 'reactor stopped on an error; restarting from its checkpoint');
      setTimeout(() => {
        // Not if the lease went meanwhile: a handler must not run in a process that lost it.
        if (this.keeper && !this.keeper.isHeld(checkpointName(r))) return;
        void this.run(r, state.fence).catch((e: unknown) => this.log?.error({ err: e, reactor: r.name }, 'reactor restart failed'));
      }, 2000);
    };
    // Events that arrive while a batch is handled wait here, in log order, and are taken together next.
    const waiting: RecordedEvent[] = [];
    let busy = false;
    const drain = async () => {
      if (busy) return;
      busy = true;
      try {
        // The store hands over what it read in one synchronous run: take all of it, not only the first.
        await null;
        while (waiting.length && this.running.get(r.name) === state) {
          const batch = waiting.splice(0, Math.max(1, r.together ?? 1)).filter((e) => e.globalPosition > state.position);
          if (!batch.length) continue;
          const work = this.handleBatch(r, batch, state);
          this.inFlight.add(work);
          try {
            await work;
          } finally {
            this.inFlight.delete(work);
          }
        }
      } catch (err) {
        stop(err);
      } finally {
        busy = false;
      }
    };
    const sub = this.eventStore.subscribeToAll({ after: state.position, filter: { eventTypes: r.eventTypes } }).subscribe({
      next: (event) => {
        if (this.running.get(r.name) !== state) return;
        waiting.push(event);
        void drain();
      },
      error: stop,
    });
    // Halted (or failed) while subscribing: nothing else will end this subscription.
    if (this.running.get(r.name) !== state) sub.unsubscribe();
    else state.sub = sub;
  }

  private async halt(r: Reactor): Promise<void> {
    const state = this.running.get(r.name);
    if (!state) return;
    this.running.delete(r.name);
    state.sub?.unsubscribe();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Handles `batch` (each event with its own attempts), then moves the checkpoint past its last event. */
  private async handleBatch(r: Reactor, batch: readonly RecordedEvent[], state: Running): Promise<void> {
    const outcomes = await Promise.allSettled(batch.map((event) => this.withAttempts(r, state, event, (attempt) => this.handleOne(r, event, attempt))));
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
    const last = batch[batch.length - 1]!;
    const moved = await this.withAttempts(r, state, last, async () => {
      await this.readStore.applyBatch({
        projection: checkpointName(r),
        expectedPosition: state.position,
        position: last.globalPosition,
        mode: 'live',
        lastEventAt: last.createdAt.toISOString(),
        changes: [],
        fence: state.fence,
      });
      return true;
    });
    if (moved) state.position = last.globalPosition;
  }

  /** The handler; on its last attempt (with dead letters) the event is set aside instead. */
  private async handleOne(r: Reactor, event: RecordedEvent, attempt: number): Promise<void> {
    try {
      await r.handle(event);
    } catch (err) {
      if (attempt < REACTOR_ATTEMPTS || !this.deadLetter || transientKind(err)) throw err;
      // Its last attempt: the event is set aside and the checkpoint moves past it.
      await this.deadLetter(r, event, err instanceof Error ? err.message : String(err));
      this.log?.error({ err, reactor: r.name, position: event.globalPosition, type: event.type }, 'reactor handler kept failing; event dead-lettered');
    }
  }

  /**
   * Runs `step` until it succeeds: a store failing for a while is waited out with back-off and no
   * attempt spent; any other failure is tried REACTOR_ATTEMPTS times. Undefined once the reactor
   * is halted or its run replaced (nothing more is done for it then).
   */
  private async withAttempts<T>(r: Reactor, state: Running, event: RecordedEvent, step: (attempt: number) => Promise<T>): Promise<T | undefined> {
    const wanted = () => !this.stopped && this.running.get(r.name) === state;
    for (let attempt = 1, stalls = 0; ; ) {
      if (!wanted()) return undefined;
      try {
        return await step(attempt);
      } catch (err) {
        if (err instanceof LeaseLostError || err instanceof CheckpointMismatchError) throw err;
        const kind = transientKind(err);
        if (kind) {
          // Not the event's fault: the same attempt again once the store answers, for as long as it takes.
          const ms = backoffDelay(++stalls, this.stallBackoff);
          this.log?.warn({ reactor: r.name, position: event.globalPosition, kind, retries: stalls, retryInMs: ms }, 'reactor store failing; retrying with back-off, no attempt spent');
          await pause(ms, wanted);
          continue;
        }
        if (attempt >= REACTOR_ATTEMPTS) throw err;
        this.log?.warn({ err, reactor: r.name, attempt }, 'reactor step failed; retrying');
        await new Promise((res) => setTimeout(res, this.pauseMs * 2 ** attempt));
        attempt++;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.keeper?.stop();
    this.keeper = null;
    for (const r of this.reactors) await this.halt(r);
    await Promise.allSettled([...this.inFlight]);
  }
}

/** Waits `ms`, in slices, ending early once the reactor is no longer `wanted` (a stop never waits out a long back-off). */
async function pause(ms: number, wanted: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (wanted() && Date.now() < end) await new Promise((res) => setTimeout(res, Math.min(250, end - Date.now())));
}
