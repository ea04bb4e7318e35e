import { describe, expect, it } from 'vitest';
import { asleepOf, groupsOf, phaseTotals, sleepNights } from '../../../src/sources/derivations/sleepSessions.js';

const H = 3_600_000;
const s = (group: string, id: string, start: number, end: number) => ({ group, id, start, end });

describe('sleep sessions from samples (contracts §3: one night per source, samples less than the gap apart)', () => {
  it('a sample starting the gap or more after the night ended starts a new night; nearer ones join it', () => {
    const nights = sleepNights([s('a', '1', 0, H), s('a', '2', 2 * H, 3 * H), s('a', '3', 5 * H, 6 * H)], 2 * H);
    expect(nights.map((n) => n.map((m) => m.id))).toEqual([['1', '2'], ['3']]);
  });

  it('the gap counts from the latest end of the night, not the last sample', () => {
    const nights = sleepNights([s('a', 'long', 0, 8 * H), s('a', 'inside', H, 2 * H), s('a', 'next', 9 * H, 10 * H)], 2 * H);
    expect(nights).toHaveLength(1);
  });

  it('each source has its own nights, in order of first appearance; ties are ordered by end then id', () => {
    const nights = sleepNights([s('b', 'y', 0, H), s('a', 'x', 0, H), s('b', 'c', 0, H), s('b', 'a', 0, 2 * H)], 2 * H);
    expect(nights.map((n) => n.map((m) => m.id))).toEqual([['c', 'y', 'a'], ['x']]);
  });

  it('phase totals sum each phase in the unit asked; asleep is deep, REM, light and unspecified sleep', () => {
    const t = phaseTotals(
      [
        { phase: 'deep', start: 0, end: 1500 },
        { phase: 'awake', start: 1500, end: 2000 },
        { phase: 'rem', start: 2000, end: 3000 },
        { phase: 'in_bed', start: 3000, end: 4000 },
        { phase: 'asleep', start: 4000, end: 4500 },
      ],
      1000,
    );
    expect(t).toEqual({ deep: 1.5, rem: 1, light: 0, awake: 0.5, asleep: 0.5, in_bed: 1 });
    expect(asleepOf(t)).toBe(3);
  });

  it('groups keep the order keys first appear in', () => {
    expect(groupsOf([1, 2, 3, 4, 5], (n) => (n % 2 ? 'odd' : 'even'))).toEqual([[1, 3, 5], [2, 4]]);
  });
});
