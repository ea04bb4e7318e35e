import { describe, expect, it } from 'vitest';
import { dateOfDayNumber, utcDayOf } from '../../../projections/records/recordDoc.js';

const DAY_MS = 86_400_000;

describe('dateOfDayNumber: the UTC date of a day number, as toISOString writes it (statistics labels and rollup days; spec Conventions: dates YYYY-MM-DD)', () => {
  it('agrees with Date for every day from 1600 to 2500 (leap years, century years, 2000)', () => {
    const from = Date.UTC(1600, 0, 1) / DAY_MS;
    const to = Date.UTC(2500, 0, 1) / DAY_MS;
    for (let d = from; d < to; d++) {
      const want = new Date(d * DAY_MS).toISOString().slice(0, 10);
      if (dateOfDayNumber(d) !== want) expect(dateOfDayNumber(d), `day ${d}`).toBe(want);
    }
  });

  it('writes the first and last days of years 0000 and 9999 with four digits, and an instant at any time of day as its date', () => {
    expect(dateOfDayNumber(Date.parse('0000-01-01T00:00:00Z') / DAY_MS)).toBe('0000-01-01');
    expect(dateOfDayNumber(Date.parse('9999-12-31T00:00:00Z') / DAY_MS)).toBe('9999-12-31');
    expect(utcDayOf(Date.parse('2024-02-29T23:59:59.999Z'))).toBe('2024-02-29');
    expect(utcDayOf(Date.parse('1969-12-31T23:59:59.999Z'))).toBe('1969-12-31');
  });
});
