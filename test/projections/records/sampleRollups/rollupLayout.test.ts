import { describe, expect, it } from 'vitest';
import { rollupDay, type RollupSample } from '../../../../projections/records/sampleRollups/dayRollup.js';
import { HOURS_PER_DAY, PackedRun, packHours, packQuarters, QUARTERS_PER_DAY, type Stat } from '../../../../projections/records/sampleRollups/rollupLayout.js';

/**
 * The packed quarters of a rollup row (issue 38): what statistics add up must be what was packed,
 * exactly, whatever the values (spec "Sample statistics": count, sum, min, max per bucket).
 */
const empty = (): (Stat | null)[] => new Array<Stat | null>(QUARTERS_PER_DAY).fill(null);
const stat = (count: number, sum: number, min: number, max: number): Stat => ({ count, sum, min, max });
/** 2026-03-29 as a day number: a field names its day. */
const DAY = 20_541;
/** Adds the quarters of a single packed field (a run of one). */
const addQuarters = (field: unknown, pieces: readonly number[], acc: Float64Array): void => new PackedRun(field).addQuarters(0, pieces, acc);

/** Every quarter added into its own slot: the field read back quarter by quarter. */
function readBack(field: unknown): (Stat | null)[] {
  const pieces = Array.from({ length: QUARTERS_PER_DAY }, (_, q) => [q, q + 1, q]).flat();
  const acc = new Float64Array(4 * QUARTERS_PER_DAY);
  addQuarters(field, pieces, acc);
  return Array.from({ length: QUARTERS_PER_DAY }, (_, q) => (acc[4 * q]! > 0 ? stat(acc[4 * q]!, acc[4 * q + 1]!, acc[4 * q + 2]!, acc[4 * q + 3]!) : null));
}

describe('rollupLayout: a day packed into its quarters reads back exactly (issue 38; spec Sample statistics)', () => {
  it('reads back every quarter of a dense day of whole numbers, packed as float32', () => {
    const quarters = Array.from({ length: QUARTERS_PER_DAY }, (_, q) => stat(15, 900 + q, 50 + (q % 7), 70 + q));
    const field = packQuarters(quarters, DAY);
    expect(field.byteLength).toBe(16 + QUARTERS_PER_DAY * 4 * 4);
    expect(readBack(field)).toEqual(quarters);
  });

  it('keeps values that are not float32 exactly (float64), and negative zero, large counts and extremes', () => {
    const quarters = empty();
    quarters[0] = stat(3, 0.1 + 0.2, 0.1, 0.2);
    quarters[50] = stat(2 ** 31, 1e300, -1e-300, Number.MAX_VALUE);
    quarters[95] = stat(2, 0.5, -0, 0.5);
    const field = packQuarters(quarters, DAY);
    expect(field.byteLength).toBe(16 + 3 * 4 * 8);
    const back = readBack(field);
    expect(back).toEqual(quarters);
    expect(Object.is(back[95]!.min, -0)).toBe(true);
  });

  it('stores only the quarters that hold samples: an empty day is its header alone', () => {
    expect(packQuarters(empty(), DAY).byteLength).toBe(16);
    const one = empty();
    one[37] = stat(1, 61, 61, 61);
    expect(packQuarters(one, DAY).byteLength).toBe(16 + 16);
    expect(readBack(packQuarters(one, DAY))).toEqual(one);
  });

  it('adds each piece\'s quarters into its slot, leaving out quarters outside every piece', () => {
    const quarters = Array.from({ length: QUARTERS_PER_DAY }, (_, q) => stat(1, q, q, q));
    const acc = new Float64Array(4 * 3);
    // Quarters 0..91 into slot 2, 93..95 into slot 0; quarter 92 in no piece.
    addQuarters(packQuarters(quarters, DAY), [0, 92, 2, 93, 96, 0], acc);
    expect([...acc]).toEqual([3, 93 + 94 + 95, 93, 95, 0, 0, 0, 0, 92, (91 * 92) / 2, 0, 91]);
  });

  it('adds the pieces of a sparse day the same way: quarters before, between and after the pieces left out', () => {
    const quarters = empty();
    for (const q of [2, 5, 6, 9, 40, 41, 90]) quarters[q] = stat(1, q, q, q);
    const acc = new Float64Array(4 * 3);
    // Quarters 5..8 into slot 1 (holding 5 and 6), 9..40 into slot 0 (holding 9), 60..96 into slot 2 (holding 90).
    addQuarters(packQuarters(quarters, DAY), [5, 9, 1, 9, 40, 0, 60, 96, 2], acc);
    expect([...acc]).toEqual([1, 9, 9, 9, 2, 11, 5, 6, 1, 90, 90, 90]);
  });

  it('adds into a slot that already holds a piece of another day, keeping min and max across both', () => {
    const a = empty();
    a[95] = stat(2, 10, 4, 6);
    const b = empty();
    b[0] = stat(1, 1, 1, 1);
    b[1] = stat(1, 9, 9, 9);
    const acc = new Float64Array(4);
    addQuarters(packQuarters(a, DAY), [92, 96, 0], acc);
    addQuarters(packQuarters(b, DAY), [0, 92, 0], acc);
    expect([...acc]).toEqual([4, 20, 1, 9]);
  });

  it('refuses what is not a packed field: a string, a wrong length, a bitmap that disagrees with its values', () => {
    const acc = new Float64Array(4);
    expect(() => addQuarters('AAAA', [0, 96, 0], acc)).toThrow(/not a packed quarters field/);
    expect(() => addQuarters(Buffer.alloc(10), [0, 96, 0], acc)).toThrow(/not a packed quarters field/);
    const one = empty();
    one[3] = stat(1, 2, 2, 2);
    const field = packQuarters(one, DAY);
    field[0] = 0b11000;
    expect(() => addQuarters(field, [0, 96, 0], acc)).toThrow(/disagree/);
  });

  it('reads a field whose bytes start off an 8-byte boundary (a store may hand back a slice of a larger buffer)', () => {
    const quarters = empty();
    quarters[10] = stat(2, 0.5, 0.2, 0.3);
    const packed = packQuarters(quarters, DAY);
    const shifted = Buffer.alloc(packed.byteLength + 3);
    packed.copy(shifted, 3);
    expect(readBack(shifted.subarray(3))).toEqual(quarters);
  });
});

describe('rollupDay: the rows of a day (issue 38; spec Sample statistics; contracts §15 flagged samples)', () => {
  const sample = (minute: number, value: number, over: Partial<RollupSample> = {}): RollupSample => ({
    startMs: Date.parse('2026-03-29T00:00:00Z') + minute * 60_000,
    value,
    provider: 'device-a',
    source: 'apple',
    unit: 'count/min',
    ingested_at: '2026-03-30T00:00:00Z',
    hidden: false,
    excluded: false,
    ...over,
  });

  it('packs each view\'s quarters and counts the day beside them; flagged samples in neither, counted apart in `all`', () => {
    const rows = rollupDay({ user_id: 'u', tenant_id: 't', type: 'heart_rate', day: '2026-03-29' }, [
      sample(0, 60),
      sample(7, 70, { hidden: true }),
      sample(16, 80),
      sample(20, 200, { hidden: true, excluded: true }),
    ]);
    const all = rows.find((r) => r.view === 'all')!;
    const merged = rows.find((r) => r.view === 'merged')!;
    expect(all).toMatchObject({ count: 3, flagged: 1 });
    expect(merged).toMatchObject({ count: 2 });
    expect(merged).not.toHaveProperty('flagged');
    expect(readBack(all.quarters).slice(0, 2)).toEqual([stat(2, 130, 60, 70), stat(1, 80, 80, 80)]);
    expect(readBack(merged.quarters).slice(0, 2)).toEqual([stat(1, 60, 60, 60), stat(1, 80, 80, 80)]);
  });
});

describe('rollupLayout: packed fields joined end to end read alone (issue 38; ReadStore.joinBytes)', () => {
  const fieldsOf = (run: PackedRun): { at: number; day: number }[] => {
    const out: { at: number; day: number }[] = [];
    for (let at = 0; at < run.byteLength; at = run.endOf(at)) out.push({ at, day: run.dayAt(at) });
    return out;
  };

  it('names its day, before 1970 and far after it too, and refuses a day number it cannot hold', () => {
    for (const day of [DAY, 0, -1, -719_162, 2 ** 23 - 1, -(2 ** 23)]) expect(new PackedRun(packQuarters(empty(), day)).dayAt(0)).toBe(day);
    expect(() => packQuarters(empty(), 2 ** 23)).toThrow(/does not fit/);
    expect(() => packQuarters(empty(), 1.5)).toThrow(/does not fit/);
  });

  it('reads each field of a run (dense float32, sparse float64, empty) as it reads the field alone, at any byte offset', () => {
    const dense = Array.from({ length: QUARTERS_PER_DAY }, (_, q) => stat(15, 900 + q, 50 + (q % 7), 70 + q));
    const sparse = empty();
    sparse[3] = stat(2, 0.1 + 0.2, 0.1, 0.2);
    sparse[80] = stat(1, -0.5, -0.5, -0.5);
    const one = empty();
    one[95] = stat(1, 61, 61, 61);
    const days = [[dense, DAY + 2], [sparse, DAY], [empty(), DAY + 7], [one, DAY + 1], [sparse, DAY + 3]] as const;
    const joined = Buffer.concat(days.map(([q, day]) => packQuarters(q, day)));
    const pieces = Array.from({ length: QUARTERS_PER_DAY }, (_, q) => [q, q + 1, q]).flat();
    for (const shift of [0, 3, 8]) {
      const bytes = Buffer.alloc(joined.byteLength + shift);
      joined.copy(bytes, shift);
      const run = new PackedRun(bytes.subarray(shift));
      const fields = fieldsOf(run);
      expect(fields.map((f) => f.day)).toEqual(days.map(([, day]) => day));
      fields.forEach(({ at }, i) => {
        const acc = new Float64Array(4 * QUARTERS_PER_DAY);
        run.addQuarters(at, pieces, acc);
        const alone = new Float64Array(4 * QUARTERS_PER_DAY);
        addQuarters(packQuarters(days[i]![0], days[i]![1]), pieces, alone);
        expect([...acc], `field ${i}, shift ${shift}`).toEqual([...alone]);
        expect(readBack(packQuarters(days[i]![0], days[i]![1]))).toEqual(days[i]![0]);
      });
    }
  });

  it('packs a day\'s hours as its quarters added up in time order, in the same layout (24 slots): empty hours absent', () => {
    const quarters = empty();
    quarters[0] = stat(1, 0.1, 0.1, 0.1);
    quarters[1] = stat(2, 0.2, 0.05, 0.15);
    quarters[3] = stat(1, 7, 7, 7);
    quarters[95] = stat(3, 30, 9, 11);
    const field = packHours(quarters, DAY);
    const run = new PackedRun(field, HOURS_PER_DAY);
    expect(run.dayAt(0)).toBe(DAY);
    expect(run.endOf(0)).toBe(field.byteLength);
    expect(field.byteLength).toBe(16 + 2 * 4 * 8);
    const acc = new Float64Array(4 * HOURS_PER_DAY);
    run.addQuarters(0, Array.from({ length: HOURS_PER_DAY }, (_, h) => [h, h + 1, h]).flat(), acc);
    const want = new Float64Array(4 * HOURS_PER_DAY);
    want.set([4, 0.1 + 0.2 + 7, 0.05, 7], 0);
    want.set([3, 30, 9, 11], 4 * 23);
    expect([...acc]).toEqual([...want]);
    // A dense day of hours: every hour holds its four quarters.
    const dense = Array.from({ length: QUARTERS_PER_DAY }, (_, q) => stat(15, 900 + q, 50 + (q % 7), 70 + q));
    const all = new Float64Array(4);
    new PackedRun(packHours(dense, DAY), HOURS_PER_DAY).addQuarters(0, [0, HOURS_PER_DAY, 0], all);
    const alone = new Float64Array(4);
    addQuarters(packQuarters(dense, DAY), [0, QUARTERS_PER_DAY, 0], alone);
    expect([...all]).toEqual([...alone]);
  });

  it('refuses a run cut short inside a field', () => {
    const quarters = empty();
    quarters[5] = stat(1, 2, 2, 2);
    const joined = Buffer.concat([packQuarters(quarters, DAY), packQuarters(quarters, DAY + 1)]);
    const run = new PackedRun(joined.subarray(0, joined.byteLength - 4));
    expect(run.endOf(0)).toBe(32);
    expect(() => run.endOf(32)).toThrow(/disagree/);
    expect(() => new PackedRun(joined.subarray(0, 40)).endOf(32)).toThrow(/not a packed quarters field/);
  });
});
