import { describe, expect, it } from 'vitest';
import { canonicalIsoMs, instantMs } from '../../src/shared/isoInstant.js';
import { mulberry32 } from '../../src/shared/seededRandom.js';

describe('ISO instants read without Date.parse (isoInstant.ts; issue 38: the merged view reads two of every sample of a touched day)', () => {
  it('reads every toISOString of years 0000-9999 as Date.parse does', () => {
    const random = mulberry32(38);
    const min = new Date('0000-01-01T00:00:00.000Z').getTime();
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const edges = [0, -1, 1, Date.UTC(2000, 1, 29), Date.UTC(1900, 1, 28, 23, 59, 59, 999), Date.UTC(2024, 1, 29, 12), Date.UTC(2100, 2, 1), max, new Date('0000-01-01T00:00:00.000Z').getTime(), new Date('0400-02-29T00:00:00.000Z').getTime()];
    for (const ms of edges) expect(canonicalIsoMs(new Date(ms).toISOString()), new Date(ms).toISOString()).toBe(ms);
    for (let i = 0; i < 100_000; i++) {
      const ms = Math.floor(min + random() * (max - min));
      const iso = new Date(ms).toISOString();
      expect(canonicalIsoMs(iso)).toBe(ms);
    }
  });

  it('answers NaN for any 24-character string that is not a valid canonical instant, where instantMs falls back to Date.parse', () => {
    for (const s of ['2024-02-30T00:00:00.000Z', '2023-02-29T00:00:00.000Z', '2024-13-01T00:00:00.000Z', '2024-00-10T00:00:00.000Z', '2024-01-00T00:00:00.000Z', '2024-01-01T24:00:00.000Z', '2024-01-01T00:60:00.000Z', '2024-01-01T00:00:60.000Z', '2024-01-01T00:00:00.00aZ', '2024-01-01 00:00:00.000Z', '2024-01-01T00:00:00.000+', '+02024-01-01T00:00:00.0Z', '1900-02-29T00:00:00.000Z']) {
      expect(canonicalIsoMs(s), s).toBeNaN();
      expect(Object.is(instantMs(s), Date.parse(s)), s).toBe(true);
    }
    for (const s of ['2024-01-01T00:00:00Z', '2024-01-01T01:00:00.000+01:00', '2024-01-01', '+012024-01-01T00:00:00.000Z', 'not a time']) {
      expect(canonicalIsoMs(s), s).toBeNaN();
      expect(Object.is(instantMs(s), Date.parse(s)), s).toBe(true);
    }
  });

  it('agrees with Date.parse on random corruptions of canonical instants (one character changed)', () => {
    const random = mulberry32(37);
    const chars = '0123456789-T:.Z+ 9';
    for (let i = 0; i < 50_000; i++) {
      const iso = new Date(Math.floor(random() * 4e12)).toISOString();
      const at = Math.floor(random() * iso.length);
      const s = iso.slice(0, at) + chars[Math.floor(random() * chars.length)] + iso.slice(at + 1);
      const ours = canonicalIsoMs(s);
      // Ours reads only the canonical form: where it answers, Date.parse answers the same and writes it back.
      if (!Number.isNaN(ours)) {
        expect(ours, s).toBe(Date.parse(s));
        expect(new Date(ours).toISOString(), s).toBe(s);
      } else if (Number.isFinite(Date.parse(s)) && s.length === 24) {
        expect(new Date(Date.parse(s)).toISOString(), s).not.toBe(s);
      }
      expect(Object.is(instantMs(s), Date.parse(s)), s).toBe(true);
    }
  });
});
