/**
 * The locators' recent tier as the projector keeps it in memory (recentLocators.ts): `_id` → a
 * slot number (a small integer, held in the Map's own table), and each slot's id, run number and
 * provider in typed arrays. An object per locator (`{ id, provider, run }`) was 48 of the ~150
 * bytes each locator kept on the projector thread's heap, which holds 100,000-200,000 of them at
 * the tier's fullest (docs/memory.md, "The 1M ingest's peak"); a slot is 20 bytes. Slots are
 * handed out in order and made dense again when a merge drops the locators it took
 * (`dropThrough`).
 */
export class TierEntries {
  private readonly slots = new Map<string, number>();
  private ids = new Float64Array(1024);
  private runs = new Float64Array(1024);
  private providerOf = new Uint32Array(1024);
  private readonly providers: string[] = [];
  private readonly providerIndex = new Map<string, number>();
  /** Slots handed out so far (every slot below it is some `_id`'s). */
  private used = 0;

  get size(): number {
    return this.slots.size;
  }

  /** `_id`'s locator, a later one replacing an earlier one in its slot. */
  set(_id: string, id: number, provider: string, run: number): void {
    let slot = this.slots.get(_id);
    if (slot === undefined) {
      if (this.used === this.ids.length) this.resize(this.used * 2);
      slot = this.used++;
      this.slots.set(_id, slot);
    }
    let p = this.providerIndex.get(provider);
    if (p === undefined) {
      p = this.providers.push(provider) - 1;
      this.providerIndex.set(provider, p);
    }
    this.ids[slot] = id;
    this.runs[slot] = run;
    this.providerOf[slot] = p;
  }

  /** The id of `_id`'s locator, if the tier has one. */
  idOf(_id: string): number | undefined {
    const slot = this.slots.get(_id);
    return slot === undefined ? undefined : this.ids[slot];
  }

  /** `_id`'s locator (one that is in the tier). */
  entry(_id: string): { id: number; provider: string } {
    const slot = this.slots.get(_id)!;
    return { id: this.ids[slot]!, provider: this.providers[this.providerOf[slot]!]! };
  }

  keys(): IterableIterator<string> {
    return this.slots.keys();
  }

  /**
   * Drops every locator of the runs up to `end` and packs the others' slots from 0, in place: the
   * Map's order is the slots' order (a new `_id` gets the next slot and goes last; a replaced one
   * keeps both), so each kept slot moves down, never over one not yet read.
   */
  dropThrough(end: number): void {
    let n = 0;
    for (const [_id, slot] of this.slots) {
      if (this.runs[slot]! <= end) {
        this.slots.delete(_id);
        continue;
      }
      this.ids[n] = this.ids[slot]!;
      this.runs[n] = this.runs[slot]!;
      this.providerOf[n] = this.providerOf[slot]!;
      this.slots.set(_id, n++);
    }
    this.used = n;
    if (this.ids.length > 4 * Math.max(n, 1024)) this.resize(2 * Math.max(n, 1024));
  }

  clear(): void {
    this.slots.clear();
    this.used = 0;
  }

  /** New arrays of `length` slots holding the slots in use. */
  private resize(length: number): void {
    const ids = new Float64Array(length);
    const runs = new Float64Array(length);
    const providerOf = new Uint32Array(length);
    ids.set(this.ids.subarray(0, this.used));
    runs.set(this.runs.subarray(0, this.used));
    providerOf.set(this.providerOf.subarray(0, this.used));
    this.ids = ids;
    this.runs = runs;
    this.providerOf = providerOf;
  }
}
