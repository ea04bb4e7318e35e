import { RecordError } from './recordError.js';

/**
 * Times as providers' data APIs send them: RFC 3339 instants whose offset is the user's local
 * zone at the time (Oura `bedtime_start`, WHOOP `start`) or UTC, and bare local dates (`day`).
 * Shared by the pull connectors: every instant is calendar-checked, every offset kept as sent.
 */

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})$/;
const OFFSET = /^([+-])(\d{2}):?(\d{2})$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export const DAY_MS = 86_400_000;

/** Milliseconds east of UTC of "+02:00", "-0500" or "Z"; null when it is not an offset of at most 18 hours. */
export function offsetMs(offset: string): number | null {
  if (offset === 'Z' || offset === 'z') return 0;
  const m = OFFSET.exec(offset);
  if (!m) return null;
  const h = Number(m[2]);
  const mi = Number(m[3]);
  if (mi > 59 || h * 60 + mi > 18 * 60) return null;
  return (m[1] === '-' ? -1 : 1) * (h * 60 + mi) * 60_000;
}

/** "+02:00" form of an offset as sent ("Z" is "+00:00"). */
export function normalOffset(offset: string): string {
  const ms = offsetMs(offset);
  if (ms === null) throw new RecordError(`${JSON.stringify(offset)} is not a zone offset such as "+01:00"`);
  const minutes = Math.abs(ms) / 60_000;
  return `${ms < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

export type Instant = { ms: number; offset: string };

/** An instant with an explicit offset: epoch milliseconds and the offset as "+hh:mm". */
export function readInstant(v: unknown, field: string): Instant {
  if (v === undefined || v === null) throw new RecordError(`${field} is missing`);
  if (typeof v !== 'string') throw new RecordError(`${field} is not a date-time`);
  const m = INSTANT.exec(v);
  if (!m) throw new RecordError(`${field} ${JSON.stringify(v).slice(0, 64)} is not a date-time with an offset`);
  const [y, mo, d, h, mi] = [+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!];
  const s = m[6] === undefined ? 0 : +m[6];
  const frac = m[7] ?? '';
  const ms = frac ? +frac.slice(0, 3).padEnd(3, '0') : 0;
  if (!validDate(y, mo, d) || h > 23 || mi > 59 || s > 59) throw new RecordError(`${field} ${JSON.stringify(v)} is not a valid date and time`);
  const off = offsetMs(m[8]!);
  if (off === null) throw new RecordError(`${field} ${JSON.stringify(v)} has an invalid offset`);
  return { ms: Date.UTC(y, mo - 1, d, h, mi, s, ms) - off, offset: normalOffset(m[8]!) };
}

/** A local calendar date as sent (`YYYY-MM-DD`), calendar-checked. */
export function readDate(v: unknown, field: string): string {
  if (typeof v !== 'string') throw new RecordError(`${field} is ${v === undefined || v === null ? 'missing' : 'not a date'}`);
  const m = DATE.exec(v);
  if (!m || !validDate(+m[1]!, +m[2]!, +m[3]!)) throw new RecordError(`${field} ${JSON.stringify(v).slice(0, 64)} is not a date YYYY-MM-DD`);
  return v;
}

function validDate(y: number, mo: number, d: number): boolean {
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d <= days;
}

/** The local calendar date of an instant at an offset. */
export function localDateOf(ms: number, offset: string): string {
  return new Date(ms + (offsetMs(offset) ?? 0)).toISOString().slice(0, 10);
}

/** The UTC calendar date of an instant, shifted by whole days (window padding). */
export function utcDate(ms: number, shiftDays = 0): string {
  return new Date(ms + shiftDays * DAY_MS).toISOString().slice(0, 10);
}

export const iso = (ms: number): string => new Date(ms).toISOString();
