import { describe, expect, it } from 'vitest';
import { dateText, instantOf, isoDate } from '../../../../src/sources/files/apple-health/exportFields.js';
import { deviceInfoOf } from '../../../../src/sources/files/apple-health/deviceString.js';
import { clockSeconds } from '../../../../src/sources/files/apple-health/heartbeats.js';

/** The date and device forms export.xml writes (contracts §13: dates keep their offsets). */

describe('apple-health: export dates', () => {
  it('isoDate equals the instant of the written date, also through its per-hour cache, for every offset form', () => {
    const offsets = ['+0000', '+0100', '+0200', '-0500', '+0530', '+1245', '-0930'];
    for (let i = 0; i < 3000; i++) {
      const ms = Date.UTC(2015, 0, 1) + i * 7_919_000 + (i % 7) * 1000;
      const off = offsets[i % offsets.length]!;
      const sign = off[0] === '-' ? -1 : 1;
      const local = new Date(ms + sign * (Number(off.slice(1, 3)) * 60 + Number(off.slice(3))) * 60_000).toISOString();
      const written = `${local.slice(0, 10)} ${local.slice(11, 19)} ${off}`;
      expect(isoDate(written)).toBe(new Date(ms).toISOString());
      expect(isoDate(written)).toBe(new Date(instantOf(written)).toISOString());
    }
  });

  it('reads iOS 8/9 compact dates and leaves what is not a date as written (device-a rejects it with its reason)', () => {
    expect(dateText('20150915113529+0200')).toBe('2015-09-15 11:35:29 +0200');
    expect(isoDate('20150915113529+0200')).toBe('2015-09-15T09:35:29.000Z');
    expect(isoDate('2024-02-30 08:00:00 +0100')).toBe('2024-02-30 08:00:00 +0100');
    expect(isoDate('2024-01-01 08:61:00 +0100')).toBe('2024-01-01 08:61:00 +0100');
    expect(isoDate(undefined)).toBeUndefined();
  });

  it('reads beat clock times in 12- and 24-hour forms', () => {
    expect(clockSeconds('8:05:41.52 PM')).toBeCloseTo(72341.52, 6);
    expect(clockSeconds('12:00:01.00 AM')).toBe(1);
    expect(clockSeconds('20:05:41,5')).toBe(72341.5);
    expect(clockSeconds('25:00:00')).toBeNaN();
  });
});

describe('apple-health: device strings', () => {
  it('parses HKDevice descriptions, with or without a creation date, whatever the object address', () => {
    const a = deviceInfoOf('<<HKDevice: 0x282a45810>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,7, software:10.2, creation date:2025-08-14 23:49:07 +0000>');
    expect(a).toEqual({ name: 'Apple Watch', manufacturer: 'Apple Inc.', model: 'Watch', hardware: 'Watch6,7', software: '10.2' });
    expect(deviceInfoOf('<<HKDevice: 0x1>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,7, software:10.2, creation date:2025-08-14 23:49:07 +0000>')).toBe(a);
    expect(deviceInfoOf('<<HKDevice: 0x2>, name:Scale, manufacturer:Withings>')).toMatchObject({ name: 'Scale', manufacturer: 'Withings', model: null });
    expect(deviceInfoOf(undefined).model).toBeNull();
  });
});
