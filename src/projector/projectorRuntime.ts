import type { Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { EventStore, RecordedEvent } from '../eventstore/eventStore.js';
import { CheckpointMismatchError, type Change, type PositionedChange, type ReadStore } from '../readstore/readStore.js';
import { LeaseLostError, type Fence } from '../readstore/leases.js';
import type { Config } from '../config.js';
import { PositionWaiters } from './positionWaiters.js';
import type { Derivation, Projection } from './projection.js';
import { ProjectorThread } from './threadedRunner.js';
import { LeaseKeeper, type LeaseSettings } from './leaseKeeper.js';
import { storedPosition } from './storedPosition.js';

export type ProjectionStatus = {
  name: string;
  status: 'live' | 'rebuilding' | 'new';
  position: number;
  head: number;
  /** Global positions between the checkpoint and the head of the log (events, on the embedded store). */
  lag: number;
  lastEventAt: string | null;
  lagSeconds: number | null;
};

export type RebuildProgress = { projection: string; position: number; head: number; events: number; elapsedMs: number };

const BATCH = 1000;
/**
 * Above this many buffered records (an event weighs its `records`, or 1) a runner lets go of its
 * subscription and catches up again: record events hold up to a thousand records each.
 */
const HIGH_WATER = 20_000;

export type ProjectorOptions = {
  /**
   * Changes per read-store transaction, at most. Small on the thread that answers HTTP (each
   * transaction blocks it), large on a projector thread (fewer commits of the same pages).
   */
  maxChangesPerBatch?: number;
  /** Told after every committed batch (a projector thread reports progress to its parent). */
  onBatch?: (projection: string, position: number) => void;
  /** These projections run on a projector thread of their own, which opens the stores from `config`. */
  thread?: { config: Config; names: readonly string[] };
  /**
   * Several service processes share the stores: each projection runs only while this process
   * holds its lease (named after the projection), and its batches are fenced by it.
   */
  leases?: LeaseSettings;
};


/** How much of the buffer an event takes: its records, for the batches of ingested records. */
const weightOf = (e: RecordedEvent): number => {
  const records = (e.data as { records?: unknown }).records;
  return Array.isArray(records) ? Math.max(1, records.length) : 1;
};

/**
 * Runs each projection from its stored checkpoint: a catch-up subscription filtered to the
 * projection's event types, events applied in batches, checkpoint advanced with the batch.
 * A runner whose checkpoint moved under it (a rebuild elsewhere) pauses and resumes from the
 * stored checkpoint once the rebuild is live again.
 */
export class ProjectorRuntime {
  private readonly runners = new Map<string, Runner>();
  private thread: ProjectorThread | null = null;
  private keeper: LeaseKeeper | null = null;

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly projections: readonly Projection[],
    private readonly log?: Logger,
    private readonly options: ProjectorOptions = {},
  ) {}

  /**
   * Declares every projection's collections. A projection one of whose collections had to be
   * recreated (its declared shape changed since the data was written) starts again from the
   * first event, so an upgrade never serves a half-empty read model.
   */
  async init(): Promise<void> {
    const reshaped = new Set(await this.readStore.ensureCollections(this.projections.flatMap((p) => p.collections)));
    for (const p of this.projections) {
      if (!p.collections.some((c) => reshaped.has(c.name))) continue;
      this.log?.warn({ projection: p.name }, 'read model shape changed; rebuilding it from the events');
      await this.readStore.dropCollections(p.collections.map((c) => c.name));
      await this.readStore.ensureCollections(p.collections);
      await this.readStore.setCheckpoint(p.name, 0, 'live');
    }
  }

  /** `declare: false` when the collections were declared already (a projector thread's parent did it). */
  async start(options: { declare?: boolean } = {}): Promise<void> {
    if (options.declare !== false) await this.init();
    const threaded = new Set(this.options.thread?.names ?? []);
    const leases = this.options.leases;
    if (leases) this.keeper = new LeaseKeeper(leases, this.log);
    for (const p of this.projections) {
      if (threaded.has(p.name)) continue;
      const runner = new Runner(p, this.eventStore, this.readStore, this.log, this.options, leases ? storedPosition(this.readStore, p.name) : undefined);
      this.runners.set(p.name, runner);
      if (this.keeper) this.keeper.hold(p.name, { start: (fence) => runner.start(fence), stop: () => runner.stop() });
      else await runner.start();
    }
    await this.keeper?.start();
    if (this.options.thread && threaded.size) {
      const names = this.projections.filter((p) => threaded.has(p.name));
      this.thread = new ProjectorThread(this.options.thread.config, names, this.eventStore, this.log, undefined, leases ? this.readStore : undefined);
      await this.thread.start();
    }
  }

  async stop(): Promise<void> {
    await this.keeper?.stop();
    this.keeper = null;
    await Promise.all([...this.runners.values()].map((r) => r.stop()));
    this.runners.clear();
    await this.thread?.stop();
    this.thread = null;
  }

  /**
   * Resolves once the named projections (default: all that run) have applied every event of
   * theirs up to `position` (default: the current head). Writes name the projections their
   * answer and the caller's next reads depend on, not all of them (docs/read-your-writes.md).
   */
  async waitForIdle(position?: number, timeoutMs = 30_000, names?: readonly string[]): Promise<void> {
    const target = position ?? (await this.eventStore.headPosition());
    const all: [string, PositionWaiters][] = [...[...this.runners].map(([n, r]) => [n, r.waiters] as [string, PositionWaiters]), ...(this.thread?.waiters ?? [])];
    const selected = names ? all.filter(([n]) => names.includes(n)) : all;
    await Promise.all(selected.map(([, w]) => w.waitFor(target, timeoutMs)));
  }

  async status(): Promise<ProjectionStatus[]> {
    return projectionStatus(this.eventStore, this.readStore, this.projections);
  }

  /**
   * Drops each projection's collections and replays every event from the start through the
   * same evolve function the live runners use, so the result equals the live state.
   */
  async rebuild(names: readonly string[] | undefined, onProgress?: (p: RebuildProgress) => void): Promise<RebuildProgress[]> {
    const selected = names && names.length ? this.projections.filter((p) => names.includes(p.name)) : this.projections;
    const unknown = (names ?? []).filter((n) => !this.projections.some((p) => p.name === n));
    if (unknown.length) throw new Error(`unknown projection(s): ${unknown.join(', ')}`);
    const results: RebuildProgress[] = [];
    for (const p of selected) results.push(await rebuildOne(p, this.eventStore, this.readStore, onProgress));
    return results;
  }
}

export async function projectionStatus(eventStore: EventStore, readStore: ReadStore, projections: readonly Projection[]): Promise<ProjectionStatus[]> {
  const head = await eventStore.headPosition();
  const out: ProjectionStatus[] = [];
  for (const p of projections) {
    const cp = await readStore.getCheckpoint(p.name);
    const position = cp?.position ?? 0;
    // A projection none of whose events came after its checkpoint is not behind, however far the head is.
    const pendingRelevant = head > position ? await eventStore.readAll({ after: position, maxCount: 1, filter: { eventTypes: p.eventTypes } }) : [];
    const lag = pendingRelevant.length ? Math.max(0, head - position) : 0;
    out.push({
      name: p.name,
      status: cp?.status ?? 'new',
      position,
      head,
      lag,
      lastEventAt: cp?.lastEventAt ?? null,
      lagSeconds: lag === 0 ? 0 : cp?.lastEventAt ? Math.max(0, (Date.now() - Date.parse(cp.lastEventAt)) / 1000) : null,
    });
  }
  return out;
}

async function rebuildOne(
  p: Projection,
  eventStore: EventStore,
  readStore: ReadStore,
  onProgress?: (p: RebuildProgress) => void,
): Promise<RebuildProgress> {
  const started = Date.now();
  // Marking the checkpoint first makes live runners elsewhere stop writing before the drop.
  await readStore.setCheckpoint(p.name, 0, 'rebuilding');
  await readStore.dropCollections(p.collections.map((c) => c.name));
  // Secondary indexes are built once at the end: cheaper than maintaining them row by row.
  await readStore.ensureCollections(p.collections, { indexes: false });
  const head = await eventStore.headPosition();
  let position = 0;
  let events = 0;
  const filter = { eventTypes: p.eventTypes };
  // Record events hold up to a thousand records: read fewer of them at a time, so that a read
  // and its transaction stay near REBUILD_CHANGES changes whatever the projection.
  let readCount = 1000;
  for (;;) {
    // A catch-up read: the live runner goes on from the last event read (KurrentDB may answer from a secondary index).
    const batch = await eventStore.readAll({ after: position, maxCount: readCount, filter, consistency: 'catch-up' });
    if (batch.length === 0) break;
    for (let from = 0; from < batch.length; ) {
      const changes: PositionedChange[] = [];
      let to = from;
      while (to < batch.length && changes.length < REBUILD_CHANGES) pushChanges(p, batch[to++]!, changes);
      const last = batch[to - 1]!;
      await readStore.applyBatch({
        projection: p.name,
        expectedPosition: position,
        position: last.globalPosition,
        mode: 'rebuilding',
        lastEventAt: last.createdAt.toISOString(),
        changes,
      });
      position = last.globalPosition;
      events += to - from;
      from = to;
      onProgress?.({ projection: p.name, position, head: Math.max(head, position), events, elapsedMs: Date.now() - started });
      // The embedded store is synchronous underneath: yield so timers and signals get a turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const perEvent = batch.reduce((n, e) => n + weightOf(e), 0) / batch.length;
    readCount = Math.max(16, Math.min(1000, Math.floor((2 * REBUILD_CHANGES) / perEvent)));
  }
  await readStore.ensureCollections(p.collections);
  if (p.derive) {
    for await (const chunk of p.derive.rebuildAll(readStore)) {
      let index = 0;
      const changes = chunk.map((c) => Object.assign(c, { position, index: index++ }) as PositionedChange);
      await readStore.applyBatch({ projection: p.name, expectedPosition: position, position, mode: 'rebuilding', lastEventAt: null, changes });
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  // Events appended during the rebuild are picked up by the live runner from here.
  await readStore.setCheckpoint(p.name, position, 'live');
  const done = { projection: p.name, position, head: Math.max(head, position), events, elapsedMs: Date.now() - started };
  onProgress?.(done);
  return done;
}

const REBUILD_CHANGES = 20_000;

/**
 * Runs a projection's derivation for a batch of events whose evolved changes are `changes`: every
 * chunk but the last goes to `applyInterim` at once (to be applied with the checkpoint unmoved),
 * the last is appended to `changes`, for the caller to apply with the batch. Answers false when
 * `stopped` interrupted it.
 */
export async function deriveBatch(
  readStore: ReadStore,
  derive: Derivation,
  events: readonly RecordedEvent[],
  changes: PositionedChange[],
  applyInterim: (changes: PositionedChange[]) => Promise<void>,
  stopped: () => boolean = () => false,
): Promise<boolean> {
  const position = events[events.length - 1]!.globalPosition;
  let index = changes.length;
  const tag = (chunk: Change[]): PositionedChange[] => chunk.map((c) => Object.assign(c, { position, index: index++ }) as PositionedChange);
  let pending: Change[] | null = null;
  for await (const chunk of derive.derive(events, changes, readStore)) {
    if (pending) await applyInterim(tag(pending));
    if (stopped()) return false;
    pending = chunk;
  }
  if (pending) changes.push(...tag(pending));
  return true;
}

export function pushChanges(p: Projection, e: RecordedEvent, out: PositionedChange[]): void {
  const changes = p.evolve(e);
  // Evolve makes new change objects on every call: tagging them in place spares a copy of each
  // of a million changes.
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as PositionedChange;
    c.position = e.globalPosition;
    c.index = i;
    out.push(c);
  }
}

/**
 * Applies one projection from its stored checkpoint. Each (re)start raises `epoch`: deliveries of
 * an earlier subscription and a flush begun before it are dropped, the buffer starts empty and
 * the next batch is expected at the checkpoint as stored, so nothing is applied twice and the
 * checkpoint never moves backwards (issue 14). Restarts are serialised.
 */
class Runner {
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
  readonly waiters: PositionWaiters;

  constructor(
    private readonly p: Projection,
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly log?: Logger,
    private readonly options: ProjectorOptions = {},
    observe?: () => Promise<number>,
  ) {
    this.waiters = new PositionWaiters(p.name, p.eventTypes, eventStore, observe);
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
      const cp = await this.readStore.getCheckpoint(this.p.name);
      if (!this.active || epoch !== this.epoch) return;
      if (cp?.status === 'rebuilding') {
        this.scheduleRestart(1000);
        return;
      }
      this.applied = cp?.position ?? 0;
      this.lastBuffered = this.applied;
      this.waiters.advance(this.applied);
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

  private async flush(epoch: number): Promise<void> {
    const maxChanges = this.options.maxChangesPerBatch ?? 2_000;
    const derive = this.p.derive;
    const current = () => this.active && epoch === this.epoch;
    while (this.buffer.length && current()) {
      const buffer = this.buffer;
      const changes: PositionedChange[] = [];
      let n = 0;
      if (derive?.isBarrier(buffer[0]!)) pushChanges(this.p, buffer[n++]!, changes);
      else {
        while (n < buffer.length && n < BATCH && changes.length < maxChanges && !derive?.isBarrier(buffer[n]!)) pushChanges(this.p, buffer[n++]!, changes);
      }
      const last = buffer[n - 1]!;
      const batch = { projection: this.p.name, position: last.globalPosition, mode: 'live' as const, lastEventAt: last.createdAt.toISOString(), fence: this.fence };
      if (derive) {
        const interim = (c: PositionedChange[]) => this.readStore.applyBatch({ ...batch, position: this.applied, expectedPosition: this.applied, changes: c });
        if (!(await deriveBatch(this.readStore, derive, buffer.slice(0, n), changes, interim, () => !current()))) return;
      }
      if (!current()) return;
      await this.readStore.applyBatch({ ...batch, expectedPosition: this.applied, changes });
      this.applied = last.globalPosition;
      this.waiters.advance(this.applied);
      this.options.onBatch?.(this.p.name, this.applied);
      if (!current()) return;
      for (const e of buffer.splice(0, n)) this.buffered -= weightOf(e);
      // A batch ran synchronously: give requests, timers and other runners a turn before the next.
      await new Promise((resolve) => setImmediate(resolve));
    }
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
    } else {
      this.log?.error({ err, projection: this.p.name }, 'projection batch failed; retrying from checkpoint');
    }
    this.scheduleRestart(err instanceof CheckpointMismatchError ? 500 : 2000);
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
    this.epoch++;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.sub?.unsubscribe();
    this.sub = null;
    this.buffer = [];
    this.buffered = 0;
    while (this.flushing) await this.flushing;
    await this.restarting;
  }
}
