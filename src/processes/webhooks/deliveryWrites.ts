import type { Logger } from 'pino';
import type { ReadStore, UpdateChange } from '../../readstore/readStore.js';

/**
 * Writes of delivery outcomes and endpoint health, gathered for a few milliseconds and applied in
 * one transaction. Changes to the same document merge, so a delivery marked running and answered
 * within the same window costs one write. A crash loses at most that window: those deliveries
 * are sent again (at least once; receivers de-duplicate on webhook-id).
 */
export class DeliveryWrites {
  private pending = new Map<string, UpdateChange>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  /** Told the number of each batch once it is stored (batches are numbered from 1 in order). */
  onStored: ((batch: number) => void) | null = null;
  private batches = 0;

  constructor(
    private readonly readStore: ReadStore,
    private readonly log?: Logger,
    private readonly windowMs = 10,
    private readonly maxChanges = 1_000,
  ) {}

  set(collection: string, id: string, set: Record<string, unknown>, upsert = false): void {
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
      .applyChanges(changes)
      .then(() => this.onStored?.(batch))
      .catch((err) => {
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

  /** The number of the batch a change made now will be stored with (or a later one, after a failure). */
  get nextBatch(): number {
    return this.batches + 1;
  }

  get size(): number {
    return this.pending.size;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }
}
