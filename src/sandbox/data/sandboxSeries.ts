import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import { mulberry32 } from '../../shared/seededRandom.js';

/**
 * What the sandbox's data APIs share to invent a person's data deterministically: a random
 * sequence seeded by (user, day, kind), so the same question always answers the same values, and
 * local wall times in a real zone (summer and winter time included).
 */
export function seeded(...parts: (string | number)[]): () => number {
  return mulberry32(createHash('sha256').update(parts.join('|')).digest().readUInt32BE(0));
}

/** A stable positive integer id (up to 2^48) for a generated object. */
export function stableId(...parts: (string | number)[]): number {
  return createHash('sha256').update(parts.join('|')).digest().readUIntBE(0, 6);
}

/** Epoch milliseconds of a local wall time on `date` (YYYY-MM-DD) in `zone`; minutes may exceed a day. */
export function localMs(date: string, minutes: number, zone: string): number {
  const wall = Date.parse(`${date}T00:00:00Z`) + minutes * 60_000;
  // The offset at the guess, then at the corrected instant (right on both sides of a change).
  const guess = wall - offsetMinutes(wall, zone) * 60_000;
  return wall - offsetMinutes(guess, zone) * 60_000;
}

/** The local date of an instant in `zone`. */
export function localDay(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toISODate()!;
}

const QUARTER_HOUR = 900_000;
const offsets = new Map<string, number>();

/** The offset of `zone` at an instant, in minutes east of UTC (zones change offset on quarter hours at the finest). */
export function offsetMinutes(ms: number, zone: string): number {
  const key = `${zone}|${Math.floor(ms / QUARTER_HOUR)}`;
  let v = offsets.get(key);
  if (v === undefined) {
    if (offsets.size > 50_000) offsets.clear();
    v = DateTime.fromMillis(ms, { zone }).offset;
    offsets.set(key, v);
  }
  return v;
}

/** Dates from `first` to `last` inclusive (YYYY-MM-DD), at most `max` of them. */
export function datesBetween(first: string, last: string, max = 400): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${first}T00:00:00Z`); t <= Date.parse(`${last}T00:00:00Z`) && out.length < max; t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

export const shiftDate = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** A value in [lo, hi) from the sequence, rounded to `digits` decimals. */
export function between(r: () => number, lo: number, hi: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round((lo + r() * (hi - lo)) * f) / f;
}
