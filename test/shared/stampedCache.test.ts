import { describe, expect, it } from 'vitest';
import { StampedCache, StampPerTurn } from '../../src/shared/stampedCache.js';

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

describe('StampPerTurn: one stamp for the requests of a turn, asked after each of them (issue 37; contracts §2: revocation on the very next request)', () => {
  const stampOf = (turn: StampPerTurn) => new Promise<number | null>((resolve, reject) => turn.after(resolve, reject));

  it('asks once for every caller waiting, and only after the last of them came, so a change made meanwhile is seen by all', async () => {
    let version = 1;
    let asked = 0;
    const turn = new StampPerTurn(() => (asked++, version));
    const first = stampOf(turn);
    version = 2; // a commit (another process's revocation) after the first request was read, before the second
    const second = stampOf(turn);
    expect(await Promise.all([first, second])).toEqual([2, 2]);
    expect(asked).toBe(1);
  });

  it('asks again for a caller that comes after a stamp was given: nothing is kept from one turn to the next', async () => {
    let version = 1;
    const turn = new StampPerTurn(() => version);
    expect(await stampOf(turn)).toBe(1);
    version = 2;
    expect(await stampOf(turn)).toBe(2);
  });

  it('fails every waiting caller when the stamp cannot be asked (a closed store), and answers the next ones again', async () => {
    let broken = true;
    const turn = new StampPerTurn(() => {
      if (broken) throw new Error('store closed');
      return 7;
    });
    const waiting = [stampOf(turn), stampOf(turn)];
    for (const w of waiting) await expect(w).rejects.toThrow('store closed');
    broken = false;
    expect(await stampOf(turn)).toBe(7);
  });
});
