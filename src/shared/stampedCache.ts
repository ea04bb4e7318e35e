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

/**
 * The read store's change stamp, asked once for every request that reached the credential check
 * in one turn of the event loop instead of once a request (auth.ts; a SQLite read transaction,
 * 7 % of a small read's HTTP thread, issue 37). "Revocation takes effect on the very next
 * request" (contracts §2) needs the stamp a request uses to be asked after the request was read:
 * a commit that finished before the request arrived, in any process, is then seen. Each request
 * waits here until the check phase of the turn it was read in (setImmediate runs after the poll
 * phase has read every socket that was ready); the stamp is asked then, after every request
 * waiting, so the rule holds for each of them, however many share it.
 */
export class StampPerTurn {
  private waiting: { then: (stamp: number | null) => void; fail: (err: Error) => void }[] = [];
  constructor(private readonly ask: () => number | null) {}

  /** Calls `then` with a stamp asked after this call, in this turn's check phase (`fail` if asking failed). */
  after(then: (stamp: number | null) => void, fail: (err: Error) => void): void {
    if (this.waiting.push({ then, fail }) === 1) setImmediate(this.answer);
  }

  private readonly answer = () => {
    const waiting = this.waiting;
    this.waiting = [];
    let stamp: number | null;
    try {
      stamp = this.ask();
    } catch (err) {
      for (const w of waiting) w.fail(err as Error);
      return;
    }
    for (const w of waiting) w.then(stamp);
  };
}
