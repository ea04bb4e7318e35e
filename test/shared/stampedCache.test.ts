import { describe, expect, it } from 'vitest';
import { StampedCache } from '../../src/shared/stampedCache.js';

describe('StampedCache: values kept only under the stamp they were read at (issue 27)', () => {
  it('gives back a kept value while the stamp stays the same, and forgets everything at another stamp', () => {
    const cache = new StampedCache<string>({ max: 10 });
    expect(cache.get(1, 'k')).toBeUndefined();
    cache.set(1, 'k', 'v1');
    expect(cache.get(1, 'k')).toBe('v1');
    expect(cache.get(2, 'k')).toBeUndefined();
    expect(cache.size).toBe(0);
    // Back to an earlier stamp: nothing kept since survives either.
    cache.set(2, 'k', 'v2');
    expect(cache.get(1, 'k')).toBeUndefined();
  });

  it('drops a value read under a stamp another reader has since moved past (it may be older than what the new stamp sees)', () => {
    const cache = new StampedCache<string>({ max: 10 });
    cache.get(1, 'k'); // reader A asks at stamp 1, then reads
    cache.get(2, 'k'); // reader B sees a change, asks at stamp 2
    cache.set(1, 'k', 'read by A');
    expect(cache.get(2, 'k')).toBeUndefined();
  });

  it('keeps nothing under a null stamp (an adapter that cannot tell), keeps no long keys, and holds at most max entries', () => {
    const cache = new StampedCache<string>({ max: 3, maxKeyLength: 8 });
    cache.get(null, 'k');
    cache.set(null, 'k', 'v');
    expect(cache.get(null, 'k')).toBeUndefined();
    cache.get(5, 'x');
    cache.set(5, 'a-much-longer-key', 'v');
    expect(cache.get(5, 'a-much-longer-key')).toBeUndefined();
    for (let i = 0; i < 10; i++) cache.set(5, `k${i}`, `v${i}`);
    expect(cache.size).toBe(3);
    expect(cache.get(5, 'k9')).toBe('v9');
  });
});
