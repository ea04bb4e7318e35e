import { describe, expect, it } from 'vitest';
import { cyclesOf, heavierFlow } from '../../../src/sources/derivations/menstrualCycles.js';

describe('menstrual cycles from flow days (contracts §3)', () => {
  it('a bleeding day after at least two days without one starts a cycle; the period ends at its last bleeding day', () => {
    const cycles = cyclesOf([10, 11, 13, 16, 17, 40]);
    expect(cycles.map((c) => [c.start, c.last, c.period_length_days, c.cycle_length_days])).toEqual([
      [10, 13, 4, 6],
      [16, 17, 2, 24],
      [40, 40, 1, null],
    ]);
    expect(cycles[0]!.days).toEqual([10, 11, 13]);
  });

  it('a day a source marks as a period start starts a cycle however near the last one', () => {
    expect(cyclesOf([1, 2, 3], (d) => d === 3).map((c) => c.start)).toEqual([1, 3]);
  });

  it('several flows on one day keep the heaviest', () => {
    expect(heavierFlow('light', undefined)).toBe(true);
    expect(heavierFlow('heavy', 'medium')).toBe(true);
    expect(heavierFlow('light', 'medium')).toBe(false);
    expect(heavierFlow('medium', 'medium')).toBe(false);
    expect(heavierFlow('unspecified', null)).toBe(true);
  });
});
