import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/eventStore.js';
import type { ReadStore } from '../readstore/readStore.js';
import type { Config } from '../config.js';
import { DEAD_LETTERS, deadLettersCollection } from './deadLetters.js';
import { listStalls, projectionStallsCollection, type StallDoc } from './projectionStalls.js';
import { replayDeadLetter, type ReplayOutcome } from './deadLetterReplay.js';
import { eventSequencesCollection, hasSequenceMarker, sequenceMarker } from './eventSequences.js';
import { PositionWaiters } from './positionWaiters.js';
import type { Projection } from './projection.js';
import { rebuildOne, type RebuildProgress } from './rebuild.js';
import { BatchLock, Runner, type RetryPolicy, type Suspect } from './runner.js';
import { ProjectorThread } from './threadedRunner.js';
import { LeaseKeeper, type LeaseSettings } from './leaseKeeper.js';
import { storedPosition } from './storedPosition.js';
import type { Backoff } from '../shared/transientErrors.js';

export type { RebuildProgress } from './rebuild.js';

export type ProjectionStatus = {
  name: string;
  status: 'live' | 'rebuilding' | 'new';
  position: number;
  head: number;
  /** Global positions between the checkpoint and the head of the log (events, on the embedded store). */
  lag: number;
  lastEventAt: string | null;
  lagSeconds: number | null;
  /** Open dead letters: events it skipped because applying them kept failing (deadLetters.ts). */
  deadLetters: number;
  /** Why it cannot move on now, when it cannot: its store failing, or an erasure that fails (projectionStalls.ts). */
  stall: Pick<StallDoc, 'state' | 'kind' | 'error' | 'since' | 'retries' | 'event_position' | 'event_type' | 'updated_at'> | null;
};

export type ProjectorOptions = {
  /**
   * Changes per read-store transaction, at most. Small on the thread that answers HTTP (each
   * transaction blocks it), large on a projector thread (fewer commits of the same pages).
   */
  maxChangesPerBatch?: number;
  /** Told after every committed batch (a projector thread reports progress to its parent). */
  onBatch?: (projection: string, position: number) => void;
  /** Told when a runner starts applying a projection here (its checkpoint) and when it stops (null): a projector thread reports it to its parent. */
  onApplying?: (projection: string, position: number | null) => void;
  /** These projections run on a projector thread of their own, which opens the stores from `config`. */
  thread?: { config: Config; names: readonly string[] };
  /**
   * Several service processes share the stores: each projection runs only while this process
   * holds its lease (named after the projection), and its batches are fenced by it.
   */
  leases?: LeaseSettings;
  /** How a failing batch is retried before its event is dead-lettered (default: 1, 2, 4, 8 s). */
  retry?: RetryPolicy;
  /** Pauses while a projection's store fails for a while, or while it is stopped on an erasure (default: 1 s doubling to 30 s). */
  stallBackoff?: Backoff;
  /** Told before each batch is applied (the projector thread reports it to its parent). */
  onAttempt?: (projection: string, from: number, through: number, events: number) => void;
  /**
   * Batches under way when the projector thread last died (threadedRunner.ts): counted as failed
   * attempts, and while there are any, batches are applied one at a time so that the next death
   * names its batch.
   */
  suspects?: readonly Suspect[];
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
    const reshaped = new Set(await this.readStore.ensureCollections([...this.projections.flatMap((p) => p.collections), eventSequencesCollection, deadLettersCollection, projectionStallsCollection]));
    // What a projection's earlier version stored elsewhere (its own version bump rebuilds it).
    const retired = this.projections.flatMap((p) => p.retired ?? []);
    if (retired.length) await this.readStore.dropCollections(retired);
    for (const p of this.projections) {
      // Record ids from an earlier version (log position × 10⁴) cannot be mixed with ids from the
      // sequence: such read models are rebuilt once, with every id from the sequence.
      const numbered = !p.sequenced || (await hasSequenceMarker(this.readStore, p.name));
      const oldIds = !numbered && ((await this.readStore.getCheckpoint(p.name))?.position ?? 0) > 0;
      if (p.collections.some((c) => reshaped.has(c.name)) || oldIds) {
        this.log?.warn({ projection: p.name }, oldIds ? 'record ids now come from a dense sequence; rebuilding the read model from the events' : 'read model shape changed; rebuilding it from the events');
        await this.readStore.dropCollections(p.collections.map((c) => c.name));
        await this.readStore.ensureCollections(p.collections);
        await this.readStore.setCheckpoint(p.name, 0, 'live');
      }
      if (!numbered) await this.readStore.applyChanges([sequenceMarker(p.name)]);
    }
  }

  /** `declare: false` when the collections were declared already (a projector thread's parent did it). */
  async start(options: { declare?: boolean } = {}): Promise<void> {
    if (options.declare !== false) await this.init();
    const threaded = new Set(this.options.thread?.names ?? []);
    const leases = this.options.leases;
    if (leases) this.keeper = new LeaseKeeper(leases, this.log);
    const suspects = this.options.suspects ?? [];
    const runnerOptions = { ...this.options, exclusive: suspects.length ? new BatchLock() : undefined };
    for (const p of this.projections) {
      if (threaded.has(p.name)) continue;
      const suspect = suspects.find((s) => s.projection === p.name);
      const runner = new Runner(p, this.eventStore, this.readStore, this.log, runnerOptions, leases ? storedPosition(this.readStore, p.name) : undefined, suspect);
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
   * `replayStore` opens the connection the replays write through, closed (its deferred writes
   * committed) when they end: one whose calls run in order on a thread of its own lets a replay
   * prepare a chunk while the last one is written (rebuild.ts; the CLI's, on the embedded store).
   */
  async rebuild(names: readonly string[] | undefined, onProgress?: (p: RebuildProgress) => void, replayStore?: () => Promise<ReadStore>): Promise<RebuildProgress[]> {
    const selected = names && names.length ? this.projections.filter((p) => names.includes(p.name)) : this.projections;
    const unknown = (names ?? []).filter((n) => !this.projections.some((p) => p.name === n));
    if (unknown.length) throw new Error(`unknown projection(s): ${unknown.join(', ')}`);
    // The runtime's own collections (sequence numbers, dead letters) may be missing from a store never started.
    await this.readStore.ensureCollections([eventSequencesCollection, deadLettersCollection, projectionStallsCollection]);
    const results: RebuildProgress[] = [];
    const replay = replayStore ? await replayStore() : undefined;
    try {
      for (const p of selected) results.push(await rebuildOne(p, this.eventStore, this.readStore, onProgress, this.options.retry, this.options.stallBackoff, replay));
    } finally {
      await replay?.close();
    }
    return results;
  }

  /** Applies a dead-lettered event again, once the code that failed on it is fixed (deadLetterReplay.ts). */
  async replayDeadLetter(id: string): Promise<ReplayOutcome> {
    return replayDeadLetter(this.eventStore, this.readStore, this.projections, id);
  }
}

export async function projectionStatus(eventStore: EventStore, readStore: ReadStore, projections: readonly Projection[]): Promise<ProjectionStatus[]> {
  const head = await eventStore.headPosition();
  const stalls = await listStalls(readStore);
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
      deadLetters: await readStore.count(DEAD_LETTERS, { status: 'open', projection: p.name }),
      stall: stallOf(stalls.get(p.name)),
    });
  }
  return out;
}


function stallOf(d: StallDoc | undefined): ProjectionStatus['stall'] {
  if (!d) return null;
  const { state, kind, error, since, retries, event_position, event_type, updated_at } = d;
  return { state, kind, error, since, retries, event_position, event_type, updated_at };
}
