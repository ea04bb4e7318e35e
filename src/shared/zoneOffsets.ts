import type { Zone } from 'luxon';
import { boundedCache } from './boundedCache.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** From `at` on (until the next segment), the zone's offset in minutes. */
export type OffsetSegment = { at: number; offset: number };

/**
 * A zone's offsets over one UTC year, found by reading the offset at every UTC midnight and, where
 * two midnights differ, searching for the minute it changed: about 380 offset lookups once per zone
 * and year, after which every instant's offset is a binary search. (Asking the zone for each
 * instant costs microseconds each through Intl; a year of day boundaries asked twice each is
 * milliseconds.) Zones do not change their offset twice within one day.
 */
const years = boundedCache<OffsetSegment[]>({ max: 512 });

function yearSegments(zone: Zone, year: number): OffsetSegment[] {
  return years.get(`${zone.name}|${year}`, () => {
    const from = Date.UTC(year, 0, 1);
    const to = Date.UTC(year + 1, 0, 1);
    const segments: OffsetSegment[] = [{ at: from, offset: zone.offset(from) }];
    for (let day = from; day < to; day += DAY_MS) {
      const before = segments[segments.length - 1]!.offset;
      const next = Math.min(day + DAY_MS, to);
      if (zone.offset(next) === before) continue;
      // The first minute of (day, next] with the new offset.
      let lo = day;
      let hi = next;
      while (hi - lo > MINUTE_MS) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS;
        if (zone.offset(mid) === before) lo = mid;
        else hi = mid;
      }
      segments.push({ at: hi, offset: zone.offset(hi) });
    }
    return segments;
  });
}

/** Offsets of `zone` over [startMs, endMs), as segments in time order (the first starts at or before startMs). */
export function offsetSegments(zone: Zone, startMs: number, endMs: number): OffsetSegment[] {
  const out: OffsetSegment[] = [];
  for (let y = new Date(startMs).getUTCFullYear(); y <= new Date(endMs).getUTCFullYear(); y++) {
    for (const s of yearSegments(zone, y)) {
      // A year's first segment repeats the previous year's last offset: keep real changes only.
      if (out.length && out[out.length - 1]!.offset === s.offset) continue;
      out.push(s);
    }
  }
  return out;
}
