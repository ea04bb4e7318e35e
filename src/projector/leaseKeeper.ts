import type { Logger } from 'pino';
import type { Fence, Lease, LeaseStore } from '../readstore/leases.js';

export type LeaseSettings = {
  store: LeaseStore;
  /** This process (or thread) as a lease holder: unique per start. */
  holder: string;
  /** How long a lease lasts without renewal: a crashed holder's work is taken over after at most this. */
  leaseMs: number;
  /** How often held leases are renewed and free ones tried. */
  renewMs: number;
  /**
   * True when a lease's holder is known to be gone (a process of this machine that no longer
   * exists): its leases are taken at once instead of after they run out. Never true for a holder
   * that may be alive; fencing keeps even a wrong answer from letting two holders write.
   */
  isGone?: (holder: string) => boolean;
};

/** Work that one process at a time may do: started when its lease is taken, stopped when it is lost. */
export type LeasedWork = {
  start: (fence: Fence) => Promise<void> | void;
  stop: () => Promise<void> | void;
};

type Entry = { name: string; work: LeasedWork; lease: Lease | null };

/**
 * Holds leases for background work (src/readstore/leases.ts): every `renewMs` it renews what it
 * holds and tries to take what it does not. Work whose lease could not be renewed before it ran
 * out is stopped; its fencing token already keeps it from writing (`Fence`), stopping it only
 * saves the effort. Every process tries every lease, so whichever is alive does the work, and a
 * crashed process's work moves on within `leaseMs + renewMs`.
 */
export class LeaseKeeper {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private running = false;

  constructor(
    private readonly settings: LeaseSettings,
    private readonly log?: Logger,
  ) {}

  get holder(): string {
    return this.settings.holder;
  }

  hold(name: string, work: LeasedWork): void {
    if (this.entries.has(name)) throw new Error(`lease ${name} is held twice`);
    this.entries.set(name, { name, work, lease: null });
  }

  isHeld(name: string): boolean {
    return !!this.entries.get(name)?.lease;
  }

  /** Takes what it can now (so a single process starts its work at once), then keeps at it. */
  async start(): Promise<void> {
    this.running = true;
    await this.tick();
  }

  /** Stops the work it holds and gives the leases up, so another process takes over at once. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    for (const e of this.entries.values()) {
      if (!e.lease) continue;
      const lease = e.lease;
      e.lease = null;
      await e.work.stop();
      await this.settings.store.release(lease).catch((err: unknown) => this.log?.warn({ err, lease: lease.name }, 'could not release a lease'));
    }
  }

  private tick(): Promise<void> {
    const run = async () => {
      for (const e of this.entries.values()) {
        if (!this.running) return;
        try {
          await (e.lease ? this.renew(e) : this.take(e));
        } catch (err) {
          this.log?.warn({ err, lease: e.name }, 'lease step failed');
          // A holder that cannot reach the store past its lease must assume it lost it.
          if (e.lease && Date.now() >= e.lease.expiresAt) await this.lose(e);
        }
      }
    };
    this.ticking = run().finally(() => {
      this.ticking = null;
      if (this.running) this.timer = setTimeout(() => void this.tick(), this.settings.renewMs);
    });
    return this.ticking;
  }

  private async take(e: Entry): Promise<void> {
    const { store, holder, leaseMs, isGone } = this.settings;
    // A read first: standing by costs no write (on the embedded store, no turn of the write lock).
    const current = await store.get(e.name);
    const taken = current !== null && current.holder !== holder && current.expiresAt > Date.now();
    let lease = null;
    if (!taken) lease = await store.acquire(e.name, holder, leaseMs);
    // A gone holder's lease is taken as at the instant it would run out: of several takers, one wins.
    else if (isGone?.(current.holder)) lease = await store.acquire(e.name, holder, leaseMs, Math.max(Date.now(), current.expiresAt));
    if (!lease) return;
    e.lease = lease;
    this.log?.info({ lease: e.name, generation: lease.generation }, 'lease taken; starting its work');
    try {
      await e.work.start({ lease: e.name, generation: lease.generation });
    } catch (err) {
      this.log?.error({ err, lease: e.name }, 'work under a lease failed to start; giving the lease up');
      e.lease = null;
      await e.work.stop();
      await this.settings.store.release(lease);
    }
  }

  private async renew(e: Entry): Promise<void> {
    const renewed = await this.settings.store.renew(e.lease!, this.settings.leaseMs);
    if (renewed) e.lease = renewed;
    else await this.lose(e);
  }

  private async lose(e: Entry): Promise<void> {
    this.log?.warn({ lease: e.name }, 'lease lost; stopping its work');
    e.lease = null;
    await e.work.stop();
  }
}
