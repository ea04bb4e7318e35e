import { describe, expect, it } from 'vitest';
import { zonedInstant } from '../../../../src/sources/shared/zonedLocalTime.js';
import { LocalClock, namedZone } from '../../../../src/sources/files/exportShared/localClock.js';

const pad = (n: number) => String(n).padStart(2, '0');

describe('local wall times read in a zone, fast (Fitbit Takeout)', () => {
  it('gives the instant luxon gives for every quarter hour around both DST changes, gaps and repeats included', () => {
    for (const name of ['Europe/Berlin', 'America/St_Johns', 'Australia/Lord_Howe', 'Australia/Sydney']) {
      const zone = namedZone(name)!;
      const clock = new LocalClock(zone);
      for (const [y, mo] of [
        [2024, 3],
        [2024, 4],
        [2024, 10],
        [2024, 11],
      ] as const) {
        for (let d = 1; d <= 28; d++) {
          for (let h = 0; h < 24; h++) {
            for (const mi of [0, 15, 30, 45]) {
              const t = { y, mo, d, h, mi, s: 7, ms: 0 };
              const expected = zonedInstant(`${y}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:07`, zone, 't').ms;
              expect(clock.instant(t).ms, `${name} ${JSON.stringify(t)}`).toBe(expected);
            }
          }
        }
      }
    }
  });

  it('tells the offset in force at an instant and the local date', () => {
    const clock = new LocalClock(namedZone('Europe/Berlin')!);
    expect(clock.offsetAt(Date.UTC(2024, 0, 1))).toBe(3_600_000);
    expect(clock.offsetAt(Date.UTC(2024, 6, 1))).toBe(7_200_000);
    expect(clock.localDate(Date.UTC(2024, 6, 1, 22, 30))).toBe('2024-07-02');
    expect(namedZone('Not/AZone')).toBeNull();
  });
});
