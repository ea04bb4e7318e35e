import { describe, expect, it } from 'vitest';
import { InvalidTimeWindowError, parseTimeParam, parseTimeWindow } from '../../src/shared/timeWindow.js';

describe('parseTimeWindow (Conventions 2; Errors 2: invalid time window)', () => {
  it('accepts an RFC 3339 time in UTC (Conventions 2)', () => {
    expect(parseTimeWindow('2026-03-01T10:20:30Z', undefined)).toEqual({ start: Date.UTC(2026, 2, 1, 10, 20, 30), end: null });
  });

  it('accepts an RFC 3339 time with fractional seconds and an offset, in its real instant (Conventions 2)', () => {
    expect(parseTimeParam('2026-03-01T10:20:30.250+02:00')).toBe(Date.UTC(2026, 2, 1, 8, 20, 30, 250));
    expect(parseTimeParam('2026-03-01T10:20:30-05:30')).toBe(Date.UTC(2026, 2, 1, 15, 50, 30));
  });

  it('accepts lower-case t and z as RFC 3339 allows (Conventions 2)', () => {
    expect(parseTimeParam('2026-03-01t10:20:30z')).toBe(Date.UTC(2026, 2, 1, 10, 20, 30));
  });

  it('reads a YYYY-MM-DD date as midnight UTC (Conventions 2)', () => {
    expect(parseTimeWindow('2026-03-01', '2026-03-02')).toEqual({ start: Date.UTC(2026, 2, 1), end: Date.UTC(2026, 2, 2) });
  });

  it('accepts February 29 of a leap year (Conventions 2)', () => {
    expect(parseTimeParam('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(parseTimeParam('2024-02-29T12:00:00Z')).toBe(Date.UTC(2024, 1, 29, 12));
  });

  it('leaves absent bounds open (Conventions 2)', () => {
    expect(parseTimeWindow(undefined, undefined)).toEqual({ start: null, end: null });
    expect(parseTimeWindow(undefined, '2026-03-01')).toEqual({ start: null, end: Date.UTC(2026, 2, 1) });
  });

  it('accepts end equal to start: an empty window, not an error (Conventions 2: end must not be before start)', () => {
    expect(parseTimeWindow('2026-03-01', '2026-03-01T00:00:00Z')).toEqual({ start: Date.UTC(2026, 2, 1), end: Date.UTC(2026, 2, 1) });
  });

  it('rejects end before start (Conventions 2)', () => {
    expect(() => parseTimeWindow('2026-03-02', '2026-03-01')).toThrow(InvalidTimeWindowError);
    expect(() => parseTimeWindow('2026-03-01T00:00:00.001Z', '2026-03-01T00:00:00Z')).toThrow(InvalidTimeWindowError);
  });

  it('compares instants, not text, across offsets (Conventions 2)', () => {
    // 10:00+02:00 is 08:00Z: before 09:00Z although its text sorts after
    expect(() => parseTimeWindow('2026-03-01T10:00:00+02:00', '2026-03-01T09:00:00Z')).not.toThrow();
    expect(() => parseTimeWindow('2026-03-01T09:00:00Z', '2026-03-01T10:00:00+02:00')).toThrow(InvalidTimeWindowError);
  });

  it.each(['2026-02-30', '2026-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00', '2026-1-5', '20260301'])(
    'rejects the invalid date %s (Conventions 2)',
    (value) => {
      expect(parseTimeParam(value)).toBeNull();
      expect(() => parseTimeWindow(value, undefined)).toThrow(InvalidTimeWindowError);
      expect(() => parseTimeWindow(undefined, value)).toThrow(InvalidTimeWindowError);
    },
  );

  it.each([
    '2026-03-01T10:00:00', // no offset: not RFC 3339
    '2026-03-01T24:00:00Z',
    '2026-03-01T10:60:00Z',
    '2026-03-01T10:00Z',
    '2026-03-01T10:00:00+2:00',
    'yesterday',
    '1772352000',
    '',
    ' 2026-03-01',
  ])('rejects %j, which is neither RFC 3339 nor YYYY-MM-DD (Conventions 2)', (value) => {
    expect(parseTimeParam(value)).toBeNull();
    expect(() => parseTimeWindow(value, undefined)).toThrow(InvalidTimeWindowError);
  });

  // Date.parse alone would roll 2026-02-30T00:00:00Z over into March.
  it.each(['2026-02-30T00:00:00Z', '2026-02-29T12:00:00Z', '2026-04-31T00:00:00+02:00'])(
    'rejects the RFC 3339 time %s on a day its month does not have (Conventions 2)',
    (value) => {
      expect(parseTimeParam(value)).toBeNull();
      expect(() => parseTimeWindow(value, undefined)).toThrow(InvalidTimeWindowError);
    },
  );
});
