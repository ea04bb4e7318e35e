import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { TierEntries } from '../../../../projections/records/sampleBlocks/tierEntries.js';

/**
 * The locators' recent tier in the projector's memory (tierEntries.ts): a locator is its `_id`'s
 * slot in typed arrays, no object of its own, and a merge's drop keeps every other locator as it
 * was. The recent tier's behaviour in the projection is recentLocators.test.ts's.
 */
const key = (i: number) => `tag-${String(i).padStart(24, '0')}`;

describe('the recent tier in memory (issue 38, the 1M ingest peak)', () => {
  it('answers each locator as last set, and a drop removes exactly the runs up to its end', () => {
    const t = new TierEntries();
    // Past the arrays' first length (1,024), so that they grow.
    for (let i = 0; i < 3_000; i++) t.set(key(i), 10_000 + i, i % 3 ? 'device-a' : 'device-b', 1 + Math.floor(i / 1_000));
    // A later run's locator of an `_id` replaces the earlier one's, in place.
    t.set(key(5), 99, 'device-c', 4);
    expect(t.size).toBe(3_000);
    expect(t.idOf(key(5))).toBe(99);
    expect(t.entry(key(5))).toEqual({ id: 99, provider: 'device-c' });
    expect(t.entry(key(7))).toEqual({ id: 10_007, provider: 'device-a' });
    expect(t.idOf('nowhere')).toBeUndefined();

    t.dropThrough(2);
    // Runs 1 and 2 gone, but key(5), which run 4 holds now.
    expect(t.size).toBe(1_001);
    expect(t.idOf(key(1_999))).toBeUndefined();
    expect(t.entry(key(5))).toEqual({ id: 99, provider: 'device-c' });
    expect(t.entry(key(2_999))).toEqual({ id: 12_999, provider: 'device-a' });
    expect([...t.keys()]).toEqual([key(5), ...Array.from({ length: 1_000 }, (_, j) => key(2_000 + j))]);

    // Slots handed out after a drop do not overwrite the kept ones.
    for (let i = 3_000; i < 4_000; i++) t.set(key(i), 10_000 + i, 'device-b', 5);
    expect(t.entry(key(2_000))).toEqual({ id: 12_000, provider: 'device-a' });
    expect(t.entry(key(3_999))).toEqual({ id: 13_999, provider: 'device-b' });
    expect(t.idOf(key(5))).toBe(99);
    t.dropThrough(4);
    expect([...t.keys()]).toEqual(Array.from({ length: 1_000 }, (_, j) => key(3_000 + j)));
    t.clear();
    expect(t.size).toBe(0);
    expect(t.idOf(key(3_000))).toBeUndefined();
  });

  it('keeps a locator in under 48 bytes of the JavaScript heap besides its key', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const n = 100_000;
    const keys = Array.from({ length: n }, (_, i) => key(i));
    gc();
    const before = process.memoryUsage().heapUsed;
    const t = new TierEntries();
    for (let i = 0; i < n; i++) t.set(keys[i]!, 2 ** 33 + i, 'device-a', 1 + (i >> 10));
    gc();
    const perLocator = (process.memoryUsage().heapUsed - before) / n;
    // An object per locator took ~85 bytes (the Map's entry ~38, the object 48); the slots' typed
    // arrays are outside the heap, whose growth V8 multiplies before it marks again.
    expect(perLocator).toBeLessThan(48);
    expect(t.idOf(keys[n - 1]!)).toBe(2 ** 33 + n - 1);
  });
});
