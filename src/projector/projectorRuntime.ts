import type { Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { EventStore, RecordedEvent } from '../eventstore/eventStore.js';
import { CheckpointMismatchError, type PositionedChange, type ReadStore } from '../readstore/readStore.js';
import type { Projection } from './projection.js';

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
/** Above this many buffered events a runner lets go of its subscription and catches up again. */
const HIGH_WATER = 20_000;

/**
 * Runs each projection from its stored checkpoint: a catch-up subscription filtered to the
 * projection's event types, events applied in batches, checkpoint advanced with the batch.
 * A runner whose checkpoint moved under it (a rebuild elsewhere) pauses and resumes from the
 * stored checkpoint once the rebuild is live again.
 */
export class ProjectorRuntime {
  private readonly runners = new Map<string, Runner>();

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly projections: readonly Projection[],
    private readonly log?: Logger,
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

  async start(): Promise<void> {
    await this.init();
    for (const p of this.projections) {
      const runner = new Runner(p, this.eventStore, this.readStore, this.log);
      this.runners.set(p.name, runner);
      await runner.start();
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.runners.values()].map((r) => r.stop()));
    this.runners.clear();
  }

  /** Resolves once every projection has applied every event up to `position` (or the current head). */
  async waitForIdle(position?: number, timeoutMs = 30_000): Promise<void> {
    const target = position ?? (await this.eventStore.headPosition());
    await Promise.all([...this.runners.values()].map((r) => r.waitFor(target, timeoutMs)));
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
  await readStore.ensureCollections(p.collections);
  const head = await eventStore.headPosition();
  let position = 0;
  let events = 0;
  const filter = { eventTypes: p.eventTypes };
  for (;;) {
    const batch = await eventStore.readAll({ after: position, maxCount: 5000, filter });
    if (batch.length === 0) break;
    const last = batch[batch.length - 1]!;
    await readStore.applyBatch({
      projection: p.name,
      expectedPosition: position,
      position: last.globalPosition,
      mode: 'rebuilding',
      lastEventAt: last.createdAt.toISOString(),
      changes: changesOf(p, batch),
    });
    position = last.globalPosition;
    events += batch.length;
    onProgress?.({ projection: p.name, position, head: Math.max(head, position), events, elapsedMs: Date.now() - started });
    // The embedded store is synchronous underneath: yield so timers and signals get a turn.
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Events appended during the rebuild are picked up by the live runner from here.
  await readStore.setCheckpoint(p.name, position, 'live');
  const done = { projection: p.name, position, head: Math.max(head, position), events, elapsedMs: Date.now() - started };
  onProgress?.(done);
  return done;
}

function changesOf(p: Projection, events: readonly RecordedEvent[]): PositionedChange[] {
  const out: PositionedChange[] = [];
  for (const e of events) {
    const changes = p.evolve(e);
    for (let i = 0; i < changes.length; i++) out.push({ ...changes[i]!, position: e.globalPosition, index: i });
  }
  return out;
}

class Runner {
  private sub: Subscription | null = null;
  private buffer: RecordedEvent[] = [];
  private position = 0;
  private lastBuffered = 0;
  private flushing: Promise<void> | null = null;
  private stopped = false;
  private paused = false;
  private waiters: { target: number; resolve: () => void }[] = [];
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly p: Projection,
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly log?: Logger,
  ) {}

  async start(): Promise<void> {
    const cp = await this.readStore.getCheckpoint(this.p.name);
    if (cp?.status === 'rebuilding') {
      this.scheduleRestart(1000);
      return;
    }
    this.position = cp?.position ?? 0;
    this.lastBuffered = this.position;
    this.subscribe();
  }

  private subscribe(): void {
    this.paused = false;
    this.sub = this.eventStore.subscribeToAll({ after: this.lastBuffered, filter: { eventTypes: this.p.eventTypes } }).subscribe({
      next: (e) => {
        this.buffer.push(e);
        this.lastBuffered = e.globalPosition;
        if (this.buffer.length >= HIGH_WATER) this.pause();
        this.kick();
      },
      error: (err) => {
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
    if (this.flushing || this.stopped) return;
    this.flushing = this.flush()
      .catch((err) => this.onFlushError(err))
      .finally(() => {
        this.flushing = null;
        if (this.buffer.length && !this.stopped) this.kick();
        else if (this.paused && !this.stopped && !this.retryTimer) this.subscribe();
      });
  }

  private async flush(): Promise<void> {
    while (this.buffer.length && !this.stopped) {
      const batch = this.buffer.slice(0, BATCH);
      const last = batch[batch.length - 1]!;
      await this.readStore.applyBatch({
        projection: this.p.name,
        expectedPosition: this.position,
        position: last.globalPosition,
        mode: 'live',
        lastEventAt: last.createdAt.toISOString(),
        changes: changesOf(this.p, batch),
      });
      this.buffer.splice(0, batch.length);
      this.position = last.globalPosition;
      this.resolveWaiters();
    }
  }

  private onFlushError(err: unknown): void {
    if (err instanceof CheckpointMismatchError) {
      this.log?.info({ projection: this.p.name }, 'checkpoint moved (rebuild elsewhere); restarting from the stored checkpoint');
    } else {
      this.log?.error({ err, projection: this.p.name }, 'projection batch failed; retrying from checkpoint');
    }
    this.sub?.unsubscribe();
    this.sub = null;
    this.buffer = [];
    this.scheduleRestart(err instanceof CheckpointMismatchError ? 500 : 2000);
  }

  private scheduleRestart(ms: number): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) this.start().catch((err) => this.onFlushError(err));
    }, ms);
  }

  async waitFor(target: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // Positions of events this projection ignores never arrive, so compare with what is relevant.
    for (;;) {
      if (this.position >= target) return;
      const relevant = await this.eventStore.readAll({ after: this.position, maxCount: 1, filter: { eventTypes: this.p.eventTypes } });
      if (relevant.length === 0 || relevant[0]!.globalPosition > target) return;
      if (Date.now() > deadline) throw new Error(`projection ${this.p.name} did not reach ${target}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiters.push({ target, resolve: () => (clearTimeout(t), resolve()) });
      });
    }
  }

  private resolveWaiters(): void {
    const ready = this.waiters.filter((w) => this.position >= w.target);
    this.waiters = this.waiters.filter((w) => this.position < w.target);
    for (const w of ready) w.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.sub?.unsubscribe();
    await this.flushing;
  }
}
