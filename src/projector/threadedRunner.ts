import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/eventStore.js';
import type { ReadStore } from '../readstore/readStore.js';
import { storedPosition } from './storedPosition.js';
import { THREAD_YOUNG_GENERATION_MB, siblingModule, startWorker } from '../shared/workerThreads.js';
import { PositionWaiters } from './positionWaiters.js';
import type { Projection } from './projection.js';
import { DEFAULT_RETRY, type Suspect } from './runner.js';

export type ProjectorThreadMessage =
  | { kind: 'ready' }
  | { kind: 'stopped' }
  | { kind: 'position'; projection: string; position: number }
  /** The thread's runner of `projection` started applying it from `position`, or stopped (null). */
  | { kind: 'applying'; projection: string; position: number | null }
  /** A batch of `events` events after the checkpoint `from`, through `through`, is about to be applied. */
  | { kind: 'attempt'; projection: string; from: number; through: number; events: number };

/**
 * The parent's side of the projector thread (`projectorThread.ts`): starts it, follows the
 * position each of its projections reports after every batch, and stops it. A thread that dies
 * is started again; it resumes from the stored checkpoints.
 *
 * A thread that dies while applying a batch (out of memory, say) is a failure of that batch that
 * no code in the thread could count: the parent counts it, for every projection that had a batch
 * under way, and starts the next thread with those counts (`suspects`): their batches are narrowed
 * to one event at a time, and the thread applies one batch at a time, so that the next death names
 * its event. An event that killed the thread on every attempt (five) is dead-lettered unapplied
 * (docs/architecture.md "Dead letters"), but for an erasure event, which never is: the projection
 * stops on it and the thread keeps being restarted (contracts §19).
 */
export class ProjectorThread {
  private worker: Worker | null = null;
  private stopping = false;
  readonly waiters: Map<string, PositionWaiters>;
  private readonly inFlight = new Map<string, { from: number; through: number; events: number }>();
  private readonly suspects = new Map<string, Suspect>();
  /** Deaths since the last batch any projection committed. */
  private deaths = 0;
  /**
   * The start after a death, while it waits out its delay. `stop` cancels it: left to run, it
   * started a thread after the context had closed, which opened the stores again in a data
   * directory already removed (test directories left in /tmp under load).
   */
  private restartTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly config: Config,
    private readonly projections: readonly Projection[],
    eventStore: EventStore,
    private readonly log?: Logger,
    private readonly maxChangesPerBatch = 10_000,
    /**
     * Given when several processes share the stores: the thread then runs a projection only while
     * it holds its lease, and waits here follow the stored checkpoints (another process may be
     * the one applying them).
     */
    leasedOn?: ReadStore,
    /** The thread's entry module (tests start one that wraps the real one). */
    private readonly entry: URL = siblingModule(import.meta.url, 'projectorThread'),
  ) {
    this.leased = !!leasedOn;
    this.waiters = new Map(
      projections.map((p) => [p.name, new PositionWaiters(p.name, p.eventTypes, eventStore, leasedOn ? storedPosition(leasedOn, p.name) : undefined)]),
    );
  }

  private readonly leased: boolean;

  async start(): Promise<void> {
    this.stopping = false;
    const suspects = [...this.suspects.values()];
    const worker = startWorker(this.entry, {
      workerData: { config: this.config, names: this.projections.map((p) => p.name), maxChangesPerBatch: this.maxChangesPerBatch, leased: this.leased, suspects },
      // The cap also sets how far V8 lets the heap grow between markings (PROJECTOR_HEAP_MB, docs/memory.md).
      resourceLimits: { maxOldGenerationSizeMb: this.config.projectorHeapMb, maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
    this.worker = worker;
    this.inFlight.clear();
    // Until the new thread says it applies a projection, waits follow the stored checkpoints.
    for (const w of this.waiters.values()) w.applyingHere = false;
    let lastError = '';
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: ProjectorThreadMessage) => {
        if (m.kind === 'position') this.progressed(m.projection, m.position);
        else if (m.kind === 'applying') this.applying(m.projection, m.position);
        else if (m.kind === 'attempt') this.inFlight.set(m.projection, { from: m.from, through: m.through, events: m.events });
        else if (m.kind === 'ready') resolve();
      });
      worker.once('error', (err) => {
        lastError = `${err.name}: ${err.message}`;
        this.log?.error({ err }, 'projector thread failed');
        reject(err);
      });
      worker.once('exit', (code) => {
        // A thread that ends before it is ready (it died on its first batch, or was stopped) must
        // not leave this start waiting for ever: the restart below, or the stop, takes over.
        resolve();
        if (this.stopping || this.worker !== worker) return;
        for (const w of this.waiters.values()) w.applyingHere = false;
        this.died(lastError || `the projector thread exited with code ${code}`);
        // Deaths without progress in between wait like retries of a failing batch (PROJECTION_RETRY_SCHEDULE).
        const delays = this.config.projectionRetryDelaysMs ?? DEFAULT_RETRY.delaysMs;
        const delay = delays[Math.min(this.deaths, delays.length) - 1] ?? 1000;
        this.log?.error({ code, restartInMs: delay, suspects: [...this.suspects.values()].map((s) => ({ projection: s.projection, at: s.at, deaths: s.count })) }, 'projector thread exited; starting it again');
        // The dead thread is nobody's to stop: `stop` meanwhile only cancels the restart.
        this.worker = null;
        this.restartTimer = setTimeout(() => {
          this.restartTimer = null;
          void this.start().catch(() => {});
        }, delay).unref();
      });
    });
  }

  private progressed(projection: string, position: number): void {
    this.waiters.get(projection)?.advance(position);
    const flight = this.inFlight.get(projection);
    if (flight && position >= flight.through) this.inFlight.delete(projection);
    const suspect = this.suspects.get(projection);
    if (suspect && position > suspect.at) this.suspects.delete(projection);
    this.deaths = 0;
  }

  private applying(projection: string, position: number | null): void {
    const waiters = this.waiters.get(projection);
    if (!waiters) return;
    waiters.applyingHere = position !== null;
    if (position !== null) waiters.advance(position);
  }

  /** Counts the death against every batch that was under way. */
  private died(error: string): void {
    this.deaths++;
    for (const [projection, f] of this.inFlight) {
      const prev = this.suspects.get(projection)?.at === f.from ? this.suspects.get(projection) : undefined;
      this.suspects.set(projection, { projection, at: f.from, through: Math.max(f.through, prev?.through ?? 0), events: f.events, count: (prev?.count ?? 0) + 1, error });
    }
    this.inFlight.clear();
  }

  async stop(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const worker = this.worker;
    if (!worker) return;
    this.stopping = true;
    for (const w of this.waiters.values()) w.applyingHere = false;
    this.worker = null;
    const stopped = new Promise<void>((resolve) => {
      worker.on('message', (m: ProjectorThreadMessage) => m.kind === 'stopped' && resolve());
      worker.once('exit', () => resolve());
    });
    worker.postMessage('stop');
    await Promise.race([stopped, new Promise((r) => setTimeout(r, 10_000).unref())]);
    await worker.terminate();
  }
}
