import type { EventStore } from '../eventstore/eventStore.js';

/**
 * The applied position of one projection and the callers waiting for it to reach a target
 * (read-your-writes). Positions of events the projection ignores never arrive, so a wait also
 * ends once no event of its types lies between the applied position and the target.
 */
export class PositionWaiters {
  position = 0;
  private waiters: { target: number; resolve: () => void }[] = [];
  /**
   * The first event of the projection's types after `position`, as last read from the log: while
   * the projection has not passed it, every waiter behind it knows it must wait without reading the
   * log again (a burst of uploads has one waiting acceptance per request, each for an event the
   * projection reads). Read again once passed, and by a waiter whose pause ran out (the event may
   * have been erased since).
   */
  private nextRelevant: number | null = null;
  /**
   * No event of the projection's types lies between `position` and here (as of the last read: the
   * log only grows past its head, and an erasure only takes events away). A wait for a target up to
   * here ends without reading the log: during a burst, the waits of the records-readable gate and
   * of the acceptances ask every view about targets a read a moment earlier already covered.
   */
  private clearThrough = 0;
  /**
   * Set while this process applies the projection (its runner holds the lease, or the projector
   * thread reports that its runner does): `position` then moves with every batch committed, from
   * the checkpoint the runner started at, so a wait has no need to read the stored checkpoint
   * (`observe`). A burst of uploads read it ~14 times an upload, each record view once for every
   * records-readable wait and every acceptance's (BENCHMARKS.md, issue 37, H18-C).
   */
  applyingHere = false;

  constructor(
    private readonly name: string,
    private readonly eventTypes: readonly string[],
    private readonly eventStore: EventStore,
    /**
     * Where the projection stands in the store, when another process may be the one applying it
     * (leases, several service processes): a wait then follows the stored checkpoint.
     */
    private readonly observe?: () => Promise<number>,
  ) {}

  advance(position: number): void {
    if (position > this.position) this.position = position;
    const ready = this.waiters.filter((w) => this.position >= w.target);
    this.waiters = this.waiters.filter((w) => this.position < w.target);
    for (const w of ready) w.resolve();
  }

  async waitFor(target: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let ownRead = false;
    for (;;) {
      if (this.position >= target) return;
      if (this.observe && !this.applyingHere) {
        this.advance(await this.observe());
        if (this.position >= target) return;
      }
      if (target <= this.clearThrough) return;
      const next = await this.firstRelevantAfterPosition();
      // Read from a position the projection has passed meanwhile: look again from where it stands.
      if (next !== null && next <= this.position) continue;
      // The first event of its types lies beyond the target: nothing before the target to wait for.
      if (next !== null && next > target) return;
      // None found: that covers the target only if the read began after it was appended (a read
      // shared with earlier waits may not have); otherwise one read of its own settles it.
      if (next === null) {
        if (target <= this.clearThrough || ownRead) return;
        ownRead = true;
        continue;
      }
      if (Date.now() > deadline) throw new Error(`projection ${this.name} did not reach ${target}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.nextRelevant = null;
          resolve();
        }, 50);
        this.waiters.push({ target, resolve: () => (clearTimeout(t), resolve()) });
      });
    }
  }

  /** The read of the log in flight: waits that start together share it. */
  private reading: Promise<number | null> | null = null;

  private async firstRelevantAfterPosition(): Promise<number | null> {
    if (this.nextRelevant !== null && this.nextRelevant > this.position) return this.nextRelevant;
    this.reading ??= this.readFirstRelevant().finally(() => (this.reading = null));
    return this.reading;
  }

  private async readFirstRelevant(): Promise<number | null> {
    // The head first: whatever the read then finds, nothing of these types lay before it up to here.
    const head = await this.eventStore.headPosition();
    const [first] = await this.eventStore.readAll({ after: this.position, maxCount: 1, filter: { eventTypes: this.eventTypes } });
    this.nextRelevant = first ? first.globalPosition : null;
    this.clearThrough = Math.max(this.clearThrough, first ? first.globalPosition - 1 : head);
    return this.nextRelevant;
  }
}
