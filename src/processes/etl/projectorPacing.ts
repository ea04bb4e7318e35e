import type { EventStore } from '../../eventstore/eventStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { Projection } from '../../projector/projection.js';
import { appliedThrough } from '../../projector/appliedThrough.js';

/**
 * Where the record projections stand against the log. `reached(p)`: every one of them has applied
 * every event of its types up to global position p (one that has none of its types in between is
 * not waited for, however old its checkpoint).
 */
export type ProjectorPositions = { head(): Promise<number>; reached(position: number): Promise<boolean> };

export type PacingOptions = {
  /** Appends of the job the projections may be behind before it waits (ETL_BULK_PROJECTOR_LEAD). */
  lead: number;
  /** How soon a waiting job looks again the first time; each next look waits twice as long, up to `maxPollMs`. */
  pollMs?: number;
  /**
   * The longest pause between two looks. A look reads the checkpoints and, for each record
   * projection behind, the log: looking every 10 ms while the projector applied an event (100 ms
   * and more) cost a bulk job's thread about 0.3 s per 100,000 records (issue 38, H16-A's profile).
   * The job waits for the event before the one it appended last (`lead` 1), so the projector has
   * that one to apply meanwhile and a look up to this late costs it nothing.
   */
  maxPollMs?: number;
  /** The longest one wait: a projection that is stuck (retrying a failing batch) does not hold the import for good. */
  maxWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
};

/**
 * Paces a bulk ETL job by the record projections (contracts §18, issue 34 §8; docs/fair-sharing.md).
 * The projector applies the log in order, so whatever a bulk job appended ahead of it lies in front
 * of every later upload, another tenant's one line included: an import that outran the projector by
 * 300,000 records kept other users' uploads unreadable for over a minute. Before each append the
 * job notes the log's head; it then waits while the projections have not reached the head it noted
 * `lead` appends earlier, so at most `lead` of its events (of at most a thousand records each) are
 * ever queued in front of anyone else's. A wait ends after `maxWaitMs` at most; after such a
 * timeout the job stops waiting until the projections reach the position it gave up on (then it is
 * paced again), so a stalled projector costs an import one `maxWaitMs`, not one per append.
 */
export class ProjectorPacing {
  private readonly marks: number[] = [];
  private stalledAt: number | null = null;
  private readonly pollMs: number;
  private readonly maxPollMs: number;
  private readonly maxWaitMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(
    private readonly positions: ProjectorPositions,
    private readonly options: PacingOptions,
  ) {
    this.pollMs = options.pollMs ?? 10;
    this.maxPollMs = Math.max(this.pollMs, options.maxPollMs ?? 40);
    this.maxWaitMs = options.maxWaitMs ?? 10_000;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.now = options.now ?? Date.now;
  }

  /** Awaited before each append of the job. */
  async beforeAppend(): Promise<void> {
    if (this.options.lead <= 0) return;
    this.marks.push(await this.positions.head());
    if (this.marks.length <= this.options.lead) return;
    const target = this.marks.shift()!;
    if (this.stalledAt !== null) {
      if (!(await this.positions.reached(this.stalledAt))) return;
      this.stalledAt = null;
    }
    const deadline = this.now() + this.maxWaitMs;
    let pause = this.pollMs;
    while (!(await this.positions.reached(target))) {
      if (this.now() >= deadline) {
        this.stalledAt = target;
        return;
      }
      await this.sleep(pause);
      pause = Math.min(pause * 2, this.maxPollMs);
    }
  }
}

/** The positions of `projections` from the checkpoints in the read store and the event log. */
export function projectorPositions(eventStore: EventStore, readStore: ReadStore, projections: readonly Projection[]): ProjectorPositions {
  return {
    head: () => eventStore.headPosition(),
    reached: async (position) => (await appliedThrough(eventStore, readStore, projections, position)) >= position,
  };
}
