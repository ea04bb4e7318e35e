import { IANAZone } from 'luxon';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bucketSamples, formatWithOffset, statsWindow } from '../../queries/records/sampleStats.js';
import { canonicalTimeZone } from '../../src/shared/timeZones.js';

/** Every upper/lower-case spelling of a zone name is a distinct string Intl accepts. */
function spellings(name: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push([...name].map((c, j) => ((i >> j % 20) & 1 ? c.toUpperCase() : c.toLowerCase())).join(''));
  return out;
}

describe('time zones named by strangers are cached by canonical name only', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('gives one canonical name for every spelling of a zone, and null for a zone Intl does not know', () => {
    expect(canonicalTimeZone('europe/paris')).toBe('Europe/Paris');
    expect(canonicalTimeZone('EUROPE/PARIS')).toBe('Europe/Paris');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeNull();
    expect(canonicalTimeZone('')).toBeNull();
  });

  it('keeps its memo of spellings bounded (10,000 spellings of one zone)', () => {
    for (const tz of spellings('America/Argentina/Buenos_Aires', 10_000)) canonicalTimeZone(tz);
    expect(canonicalTimeZone.cache.size).toBeLessThanOrEqual(canonicalTimeZone.cache.max);
  });

  it('hands luxon (whose per-zone caches never evict) only canonical zone names, whatever a statistics caller spells', () => {
    const create = vi.spyOn(IANAZone, 'create');
    const rows = [{ start_date: '2026-03-29T10:00:00Z', provider: 'p', source: 's', unit: 'count', value: 1 }];
    const expected = formatWithOffset(statsWindow('2026-03-29', '2026-03-30', 'day', 'Europe/Berlin').start);
    for (const tz of spellings('Europe/Berlin', 200)) {
      expect(formatWithOffset(statsWindow('2026-03-29', '2026-03-30', 'day', tz).start)).toBe(expected);
      expect(bucketSamples(rows, { interval: 'day', tz }).buckets[0]!.start).toBe('2026-03-29T00:00:00+01:00');
    }
    expect(create).toHaveBeenCalled();
    expect(new Set(create.mock.calls.map(([name]) => name))).toEqual(new Set(['Europe/Berlin']));
  });

  it('still refuses a zone Intl does not know without luxon remembering it', () => {
    const create = vi.spyOn(IANAZone, 'create');
    expect(() => statsWindow('2026-03-29', '2026-03-30', 'day', 'Mars/Olympus_Mons')).toThrow(/not an IANA time zone/);
    bucketSamples([{ start_date: '2026-03-29T10:00:00Z', provider: 'p', source: 's', unit: 'count', value: 1 }], { interval: 'day', tz: 'Mars/Olympus_Mons' });
    expect(create).not.toHaveBeenCalled();
  });
});
