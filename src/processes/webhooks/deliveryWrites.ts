import type { Logger } from 'pino';
import type { ReadStore, UpdateChange } from '../../readstore/readStore.js';
import { LeaseLostError, type Fence } from '../../readstore/leases.js';

/**
 * Writes of delivery outcomes and endpoint health, gathered for a few milliseconds and applied in
 * one transaction. Changes to the same document merge, so a delivery marked running and answered
 * within the same window costs one write. A crash loses at most that window: those deliveries
 * are sent again (at least once; receivers de-duplicate on webhook-id).
 *
 * Several processes: every batch carries the engine's lease (`fence`) and is refused once another
 * process holds it. A refused batch is dropped, not retried (its deliveries belong to the new
 * holder, which sends them again), nothing more is taken, and `onLost` tells the engine.
 */
export class DeliveryWrites {
  private pending = new Map<string, UpdateChange>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  /** Told the number of each batch once it is stored (batches are numbered from 1 in order). */
  onStored: ((batch: number) => void) | null = null;
  private batches = 0;
  /** The engine's lease while it holds one; undefined for a single process. */
  private fence: Fence | undefined;
  private lost = false;
  /** Told once when a batch was refused because the lease moved on. */
  onLost: (() => void) | null = null;

  constructor(
    private readonly readStore: ReadStore,
    private readonly log?: Logger,
    private readonly windowMs = 10,
    private readonly maxChanges = 1_000,
  ) {}

  /** Starts a holding of the lease: later batches are fenced by it. */
  hold(fence: Fence | undefined): void {
    this.fence = fence;
    this.lost = false;
  }

  /** True once a batch was refused: this process no longer holds the lease it wrote under. */
  get leaseLost(): boolean {
    return this.lost;
  }

  set(collection: string, id: string, set: Record<string, unknown>, upsert = false): void {
    if (this.lost) return;
    const key = `${collection}\u0000${id}`;
    const existing = this.pending.get(key);
    if (existing) {
      existing.set = { ...existing.set, ...set };
      existing.upsert = existing.upsert || upsert;
    } else {
      this.pending.set(key, { op: 'update', collection, id, set: { ...set }, upsert });
    }
    if (this.pending.size >= this.maxChanges) this.flushSoon(0);
    else this.flushSoon(this.windowMs);
  }

  private flushSoon(ms: number): void {
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, ms);
  }

  /** Applies everything gathered so far; resolves once it is stored. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const changes = [...this.pending.values()];
    this.pending = new Map();
    const batch = ++this.batches;
    this.flushing = this.readStore
      .applyChanges(changes, { fence: this.fence })
      .then(() => this.onStored?.(batch))
      .catch((err) => {
        if (err instanceof LeaseLostError) return this.loseLease(err);
        // Put back what did not land, under anything written since (newer values win).
        for (const c of changes) {
          const key = `${c.collection}\u0000${c.id}`;
          const newer = this.pending.get(key);
          this.pending.set(key, newer ? { ...c, set: { ...c.set, ...newer.set }, upsert: c.upsert || newer.upsert } : c);
        }
        this.log?.error({ err }, 'webhook delivery outcomes not stored; retrying');
        this.flushSoon(1000);
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
  }

  private loseLease(err: LeaseLostError): void {
    this.pending = new Map();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.lost) return;
    this.lost = true;
    this.log?.warn({ lease: err.lease, generation: err.generation, stored: err.stored }, 'webhook lease lost; delivery outcomes not written');
    this.onLost?.();
  }

  /** The number of the batch a change made now will be stored with (or a later one, after a failure). */
  get nextBatch(): number {
    return this.batches + 1;
  }

  get size(): number {
    return this.pending.size;
  }

  /** Stores what is gathered, unless the lease was lost: then it is dropped. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.lost) this.pending = new Map();
    await this.flush();
  }
}
