import { DateTime } from 'luxon';
import { canonicalTimeZone } from '../../../shared/timeZones.js';
import { normalOffset } from '../../shared/providerTimes.js';
import type { LocalZone } from '../../shared/zonedLocalTime.js';

/**
 * Wall-clock times of an export that carries no offset, read in the user's zone. Exports hold
 * millions of such times; converting each through luxon costs microseconds, so the offset is
 * remembered per wall-clock hour (and per UTC hour the other way) whenever it is the same at both
 * ends of that hour. Hours that hold a change of offset (a DST change, even one at half past) are
 * computed time by time through luxon, exactly as src/connectors/shared/zonedLocalTime.ts reads
 * them (a skipped wall time, a repeated one).
 */

export type WallTime = { y: number; mo: number; d: number; h: number; mi: number; s: number; ms: number };

const HOUR_MS = 3_600_000;
const NEAR_MS = 3 * HOUR_MS;
const MAX_CACHED_HOURS = 200_000;

export class LocalClock {
  private readonly wallHours = new Map<number, number | null>();
  private readonly utcHours = new Map<number, number | null>();

  constructor(readonly zone: LocalZone) {}

  /** The instant of a wall-clock time in this zone, with the offset then. */
  instant(t: WallTime): { ms: number; offsetMs: number } {
    const wall = Date.UTC(t.y, t.mo - 1, t.d, t.h, t.mi, t.s, t.ms);
    if (!this.zone.name) return { ms: wall - this.zone.offsetMs, offsetMs: this.zone.offsetMs };
    const hour = Math.floor(wall / HOUR_MS);
    let cached = this.wallHours.get(hour);
    if (cached === undefined) {
      const a = this.exactOffsetOfWall(hour * HOUR_MS);
      const b = this.exactOffsetOfWall(hour * HOUR_MS + HOUR_MS - 1);
      cached = a !== null && a === b ? a : null;
      remember(this.wallHours, hour, cached);
    }
    const off = cached ?? this.exactOffsetOfWall(wall) ?? this.slowOffset(t);
    return { ms: wall - off, offsetMs: off };
  }

  /** The zone's offset at an instant. */
  offsetAt(ms: number): number {
    if (!this.zone.name) return this.zone.offsetMs;
    const hour = Math.floor(ms / HOUR_MS);
    let cached = this.utcHours.get(hour);
    if (cached === undefined) {
      const a = this.offsetOfInstant(hour * HOUR_MS);
      const b = this.offsetOfInstant(hour * HOUR_MS + HOUR_MS - 1);
      cached = a === b ? a : null;
      remember(this.utcHours, hour, cached);
    }
    return cached ?? this.offsetOfInstant(ms);
  }

  /** The local calendar date (YYYY-MM-DD) of an instant. */
  localDate(ms: number): string {
    return new Date(ms + this.offsetAt(ms)).toISOString().slice(0, 10);
  }

  private offsetOfInstant(ms: number): number {
    return DateTime.fromMillis(ms, { zone: this.zone.name! }).offset * 60_000;
  }

  /**
   * The offset of a wall time when no change of offset lies within three hours of it (the same
   * offset then maps it one way only); null near a change, which luxon resolves instead.
   */
  private exactOffsetOfWall(wall: number): number | null {
    const guess = this.offsetOfInstant(wall - this.offsetOfInstant(wall));
    const at = wall - guess;
    if (this.offsetOfInstant(at) !== guess) return null;
    if (this.offsetOfInstant(at - NEAR_MS) !== guess || this.offsetOfInstant(at + NEAR_MS) !== guess) return null;
    return guess;
  }

  private slowOffset(t: WallTime): number {
    const dt = DateTime.fromObject({ year: t.y, month: t.mo, day: t.d, hour: t.h, minute: t.mi, second: t.s, millisecond: t.ms }, { zone: this.zone.name! });
    return Date.UTC(t.y, t.mo - 1, t.d, t.h, t.mi, t.s, t.ms) - dt.toMillis();
  }
}

function remember(map: Map<number, number | null>, key: number, value: number | null) {
  if (map.size >= MAX_CACHED_HOURS) map.clear();
  map.set(key, value);
}

/** "+01:00" for an offset in milliseconds. */
export function offsetText(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  return normalOffset(`${ms < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`);
}

/** A zone by IANA name, or null when the name is not one Intl knows. */
export function namedZone(name: unknown): LocalZone | null {
  const known = typeof name === 'string' && name.trim() ? canonicalTimeZone(name.trim()) : null;
  return known ? { name: known, offsetMs: 0 } : null;
}

export const UTC_ZONE: LocalZone = { name: null, offsetMs: 0 };

const DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Calendar-checks a wall time's fields. */
export function validWallTime(t: WallTime): boolean {
  if (t.mo < 1 || t.mo > 12 || t.d < 1 || t.d > DAYS[t.mo]! || t.h > 23 || t.mi > 59 || t.s > 59) return false;
  if (t.mo === 2 && t.d === 29) return t.y % 4 === 0 && (t.y % 100 !== 0 || t.y % 400 === 0);
  return true;
}
