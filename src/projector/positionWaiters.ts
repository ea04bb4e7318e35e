import type { EventStore } from '../eventstore/eventStore.js';

/**
 * The applied position of one projection and the callers waiting for it to reach a target
 * (read-your-writes). Positions of events the projection ignores never arrive, so a wait also
 * ends once no event of its types lies between the applied position and the target.
 */
export class PositionWaiters {
  position = 0;
  private waiters: { target: number; resolve: () => void }[] = [];

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
    for (;;) {
      if (this.position >= target) return;
      if (this.observe) {
        this.advance(await this.observe());
        if (this.position >= target) return;
      }
      const relevant = await this.eventStore.readAll({ after: this.position, maxCount: 1, filter: { eventTypes: this.eventTypes } });
      if (relevant.length === 0 || relevant[0]!.globalPosition > target) return;
      if (Date.now() > deadline) throw new Error(`projection ${this.name} did not reach ${target}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiters.push({ target, resolve: () => (clearTimeout(t), resolve()) });
      });
    }
  }
}
