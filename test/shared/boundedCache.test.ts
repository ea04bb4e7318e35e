import { describe, expect, it, vi } from 'vitest';
import { boundedCache, boundedMemo, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_KEY_LENGTH } from '../../src/shared/boundedCache.js';

describe('boundedCache (caches keyed by strangers’ strings stay bounded)', () => {
  it('keeps its size at the bound however many distinct stranger keys arrive (100,000 keys, default bound)', () => {
    const cache = boundedCache<string>();
    let largest = 0;
    let wrong = 0;
    for (let i = 0; i < 100_000; i++) {
      const key = `unit-${i}-${Math.random().toString(36).slice(2)}`;
      if (cache.get(key, (k) => k.toUpperCase()) !== key.toUpperCase()) wrong++;
      largest = Math.max(largest, cache.size);
    }
    expect(wrong).toBe(0);
    expect(largest).toBe(DEFAULT_MAX_ENTRIES);
    expect(cache.size).toBe(DEFAULT_MAX_ENTRIES);
    expect(cache.max).toBe(DEFAULT_MAX_ENTRIES);
  });

  it('keeps a given bound (a memo of 100,000 distinct keys holds max entries)', () => {
    const memo = boundedMemo((k) => k.length, { max: 50 });
    for (let i = 0; i < 100_000; i++) memo(`tz/${i}`);
    expect(memo.cache.size).toBe(50);
  });

  it('computes a key once while it is remembered, and evicts the least recently used first', () => {
    const compute = vi.fn((k: string) => `v:${k}`);
    const memo = boundedMemo(compute, { max: 2 });
    memo('a');
    memo('b');
    memo('a'); // a is now the most recently used
    expect(compute).toHaveBeenCalledTimes(2);
    memo('c'); // evicts b
    memo('a');
    expect(compute).toHaveBeenCalledTimes(3);
    memo('b');
    expect(compute).toHaveBeenCalledTimes(4);
  });

  it('keeps least-recently-used order when it grows from its first few entries to the full cache', () => {
    const compute = vi.fn((k: string) => `v:${k}`);
    const memo = boundedMemo(compute, { max: 40 });
    for (let i = 0; i < 32; i++) memo(`k${i}`);
    memo('k0'); // k0 is now the most recently used; k1 the least
    for (let i = 32; i < 41; i++) memo(`k${i}`); // one over max: evicts k1
    expect(memo.cache.size).toBe(40);
    compute.mockClear();
    memo('k0');
    expect(compute).not.toHaveBeenCalled();
    memo('k1');
    expect(compute).toHaveBeenCalledTimes(1);
  });

  it('remembers “known absent” results (null, undefined) like any other, so an unknown key is not recomputed', () => {
    const compute = vi.fn((k: string) => (k === 'null' ? null : undefined));
    const memo = boundedMemo<null | undefined>(compute);
    expect(memo('null')).toBeNull();
    expect(memo('null')).toBeNull();
    expect(memo('undefined')).toBeUndefined();
    expect(memo('undefined')).toBeUndefined();
    expect(compute).toHaveBeenCalledTimes(2);
    expect(memo.cache.size).toBe(2);
  });

  it('never remembers a key longer than maxKeyLength (a huge stranger string costs its sender, not memory)', () => {
    const compute = vi.fn((k: string) => k.length);
    const memo = boundedMemo(compute);
    const huge = 'x'.repeat(DEFAULT_MAX_KEY_LENGTH + 1);
    expect(memo(huge)).toBe(DEFAULT_MAX_KEY_LENGTH + 1);
    expect(memo(huge)).toBe(DEFAULT_MAX_KEY_LENGTH + 1);
    expect(compute).toHaveBeenCalledTimes(2);
    expect(memo.cache.size).toBe(0);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => boundedCache({ max: 0 })).toThrow(RangeError);
  });
});
