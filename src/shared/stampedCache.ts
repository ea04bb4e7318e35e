import { LRUCache } from 'lru-cache';

/**
 * Values read from a store, kept only while the store's change stamp stays what it was when they
 * were read (`ReadStore.changeStamp`: it moves whenever any document may have changed, by anyone).
 * A reader asks the stamp first and reads second: what it reads is then at least as new as the
 * stamp, so keeping it under that stamp can never serve a value older than one a later stamp
 * would see. A new stamp forgets everything, so nothing is ever served across a change, whoever
 * made it, whichever process it came from.
 *
 * Bounded like every cache here: at most `max` entries (least recently used evicted first), and
 * keys longer than `maxKeyLength` are never kept. A null stamp (an adapter that cannot tell) keeps
 * nothing.
 */
export class StampedCache<V extends {}> {
  private stamp: number | null = null;
  private readonly entries: LRUCache<string, V>;
  private readonly maxKeyLength: number;

  constructor(options: { max: number; maxKeyLength?: number }) {
    this.entries = new LRUCache<string, V>({ max: options.max });
    this.maxKeyLength = options.maxKeyLength ?? 128;
  }

  /** The value kept for `key` at `stamp` (the stamp just asked), if any. */
  get(stamp: number | null, key: string): V | undefined {
    if (stamp === null) return undefined;
    if (stamp !== this.stamp) {
      this.entries.clear();
      this.stamp = stamp;
      return undefined;
    }
    return this.entries.get(key);
  }

  /**
   * Keeps `value`, read after `stamp` was asked (and given to `get`). Another request may have
   * seen a newer stamp meanwhile: then the value may be older than what is kept, and is dropped.
   */
  set(stamp: number | null, key: string, value: V): void {
    if (stamp === null || stamp !== this.stamp || key.length > this.maxKeyLength) return;
    this.entries.set(key, value);
  }

  get size(): number {
    return this.entries.size;
  }
}
