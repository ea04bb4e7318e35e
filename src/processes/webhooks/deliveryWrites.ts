import type { Logger } from 'pino';
import type { ApplyBatch, PositionedChange, ReadStore, UpdateChange } from '../../readstore/readStore.js';
import { LeaseLostError, type Fence } from '../../readstore/leases.js';

/**
 * Writes of delivery outcomes and endpoint health, gathered for a few milliseconds and applied in
 * one transaction. Changes to the same document merge, so a delivery marked running and answered
 * within the same window costs one write. A crash loses at most that window: those deliveries
 * are sent again (at least once; receivers de-duplicate on webhook-id).
 *
 * The dispatcher's batches are stored here too (`store`), with whatever was gathered meanwhile:
 * the outcome of a delivery whose row the batch creates goes into that row, which is then written
 * once, with its outcome (docs/webhooks.md "What one delivery costs the store"). Until its batch is
 * stored, such a delivery's outcome stays out of the windows' writes (`expect`): its row is not in
 * the store yet.
 *
 * Several processes: every batch carries the engine's lease (`fence`) and is refused once another
 * process holds it. A refused batch is dropped, not retried (its deliveries belong to the new
 * holder, which sends them again), nothing more is taken, and `onLost` tells the engine.
 */
export class DeliveryWrites {
  private pending = new Map<string, UpdateChange>();
  /** Keys of rows a dispatcher batch will create: their outcomes wait for that batch. */
  private readonly expected = new Set<string>();
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
    const key = keyOf(collection, id);
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

  /** Rows of `collection` that a dispatcher batch about to be stored creates (its `store` call ends the wait). */
  expect(collection: string, ids: readonly string[]): void {
    for (const id of ids) this.expected.add(keyOf(collection, id));
  }

  private flushSoon(ms: number): void {
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      // A dispatcher batch is on its way (within the worker's answersWaitMs): it carries them.
      if (this.expected.size === 0) void this.flush();
    }, ms);
  }

  /** Applies everything gathered so far (but the outcomes of rows not created yet); resolves once it is stored. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    const changes = this.take();
    if (changes.length === 0) return;
    await this.apply(changes, (batch) => this.readStore.applyChanges(changes, { fence: this.fence }).then(() => this.onStored?.(batch)));
  }

  /**
   * Stores a dispatcher batch, new rows (upserts with `setOnInsert`) first, with every outcome
   * gathered so far: an outcome of one of its new rows is written into that row, the others after
   * them in the same transaction. A failed batch is the dispatcher's to read again; what it
   * carried of the windows' outcomes is put back. Resolves once stored, rejects as applyBatch did.
   */
  async store(batch: Omit<ApplyBatch, 'fence'>): Promise<void> {
    while (this.flushing) await this.flushing;
    const created = batch.changes.map((c) => (c.op === 'update' && c.upsert && c.setOnInsert ? keyOf(c.collection, c.id) : null));
    for (const key of created) if (key) this.expected.delete(key);
    const gathered = this.lost ? new Map<string, UpdateChange>() : this.pending;
    this.pending = new Map();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const changes: PositionedChange[] = batch.changes.map((c, i) => {
      const outcome = created[i] ? gathered.get(created[i]!) : undefined;
      if (!outcome || c.op !== 'update') return c;
      gathered.delete(created[i]!);
      // Written into the new row only: a row stored before (the event read again after a failed
      // batch) keeps its own progress, and this attempt counts as one more sending of it.
      return { ...c, setOnInsert: { ...c.setOnInsert, ...outcome.set } };
    });
    const carried = [...gathered.values()];
    // Behind the batch's own changes, tagged with its last position (MongoDB's replay guard).
    for (const c of carried) changes.push({ ...c, position: batch.position, index: changes.length });
    await this.apply(
      carried,
      (n) => this.readStore.applyBatch({ ...batch, changes, fence: this.fence }).then(() => this.onStored?.(n)),
      true,
    );
  }

  /** Takes the gathered changes that can be written now. */
  private take(): UpdateChange[] {
    const changes: UpdateChange[] = [];
    for (const [key, c] of this.pending) {
      if (this.expected.has(key)) continue;
      changes.push(c);
      this.pending.delete(key);
    }
    return changes;
  }

  /**
   * Runs one write as the next batch. A refused lease drops it; another failure puts `changes`
   * back under anything gathered since (newer values win) and tries again shortly, and is thrown
   * to the caller when `rethrow` (the dispatcher reads its batch again).
   */
  private async apply(changes: readonly UpdateChange[], write: (batch: number) => Promise<void>, rethrow = false): Promise<void> {
    const batch = ++this.batches;
    let failure: unknown = null;
    this.flushing = write(batch)
      .catch((err) => {
        failure = err;
        if (err instanceof LeaseLostError) return this.loseLease(err);
        for (const c of changes) {
          const key = keyOf(c.collection, c.id);
          const newer = this.pending.get(key);
          this.pending.set(key, newer ? { ...c, set: { ...c.set, ...newer.set }, upsert: c.upsert || newer.upsert } : c);
        }
        if (!rethrow) this.log?.error({ err }, 'webhook delivery outcomes not stored; retrying');
        if (this.pending.size) this.flushSoon(1000);
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
    if (rethrow && failure) throw failure;
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
    this.expected.clear();
    await this.flush();
  }
}

const keyOf = (collection: string, id: string) => `${collection}\u0000${id}`;
