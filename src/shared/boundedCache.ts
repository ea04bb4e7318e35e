import { LRUCache } from 'lru-cache';

/**
 * Caches keyed by strings that strangers choose (uploaded unit strings, time-zone names, activity
 * and category names, query parameters) must not grow with what is sent: this is the one way to
 * make them. At most `max` entries, the least recently used evicted first (lru-cache), and keys
 * longer than `maxKeyLength` are computed every time but never remembered, so what a cache holds is
 * bounded by max × (key length + value) whatever arrives.
 *
 * Results that say "absent" (null for an unknown unit, undefined) are cached like any other: lru-cache
 * cannot store null or undefined, so they are kept as sentinels and given back as they came.
 *
 * Caches whose keys are a fixed vocabulary (catalog types, constant tables) stay plain Maps.
 */
export const DEFAULT_MAX_ENTRIES = 1_000;
/** Unit strings, zone names and HealthKit identifiers are well under this. */
export const DEFAULT_MAX_KEY_LENGTH = 256;

export type BoundedCacheOptions = {
  /** Entries kept at most; DEFAULT_MAX_ENTRIES when not given. */
  max?: number;
  /** Longer keys are not remembered; DEFAULT_MAX_KEY_LENGTH when not given. */
  maxKeyLength?: number;
};

export interface BoundedCache<V> {
  /** The value remembered for `key`, else `compute(key)`, remembered (null and undefined included). */
  get(key: string, compute: (key: string) => V): V;
  /** Entries held now; never more than `max`. */
  readonly size: number;
  readonly max: number;
  clear(): void;
}

/** A bounded memo of one function: `memo(key)` is `compute(key)`, computed once while remembered. */
export type BoundedMemo<V> = ((key: string) => V) & { readonly cache: BoundedCache<V> };

const NULL: unique symbol = Symbol('null');
const UNDEFINED: unique symbol = Symbol('undefined');
type Stored = {} | typeof NULL | typeof UNDEFINED;

/**
 * Entries a cache keeps in a plain Map before it takes an LRUCache: lru-cache allocates its
 * arrays for `max` entries up front (~65 µs for 1,000), and most caches made per upload (a
 * one-line upload's provenances and unit converters) never hold more than a handful.
 */
const SMALL_ENTRIES = 32;

export function boundedCache<V>(options: BoundedCacheOptions = {}): BoundedCache<V> {
  const max = options.max ?? DEFAULT_MAX_ENTRIES;
  const maxKeyLength = options.maxKeyLength ?? DEFAULT_MAX_KEY_LENGTH;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, not ${max}`);
  let small: Map<string, Stored> | null = new Map();
  let lru: LRUCache<string, Stored> | null = null;
  const remember = (key: string, stored: Stored) => {
    if (small && small.size < Math.min(SMALL_ENTRIES, max)) return void small.set(key, stored);
    if (!lru) {
      lru = new LRUCache<string, Stored>({ max });
      // Least recently used first, so they are the first evicted.
      for (const [k, v] of small!) lru.set(k, v);
      small = null;
    }
    lru.set(key, stored);
  };
  return {
    get(key, compute) {
      if (key.length > maxKeyLength) return compute(key);
      const hit = small ? small.get(key) : lru!.get(key);
      if (hit !== undefined) {
        // Moved to the end: the Map's order is then least recently used first, as the LRUCache's.
        if (small) {
          small.delete(key);
          small.set(key, hit);
        }
        return (hit === NULL ? null : hit === UNDEFINED ? undefined : hit) as V;
      }
      const v = compute(key);
      remember(key, v === null ? NULL : v === undefined ? UNDEFINED : (v as {}));
      return v;
    },
    get size() {
      return small ? small.size : lru!.size;
    },
    max,
    clear() {
      small = new Map();
      lru = null;
    },
  };
}

export function boundedMemo<V>(compute: (key: string) => V, options: BoundedCacheOptions = {}): BoundedMemo<V> {
  const cache = boundedCache<V>(options);
  return Object.assign((key: string) => cache.get(key, compute), { cache });
}
