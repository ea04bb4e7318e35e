import { DateTime } from 'luxon';
import { canonicalTimeZone } from '../../shared/timeZones.js';
import { RecordError } from './recordError.js';
import { normalOffset } from './providerTimes.js';

/**
 * The zone a provider's bare local times ("2026-03-29T02:30:00", a date alone) belong to, when
 * its API sends them without an offset (Fitbit, Polar): an IANA name resolves each time with the
 * offset in force then (summer and winter time both right); a fixed offset is the fallback when
 * the provider only tells today's offset.
 */
export type LocalZone = { name: string | null; offsetMs: number };

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?$/;

/** Reads a zone as a provider states it: an IANA name when Intl knows it, else the offset alone. */
export function localZone(name: unknown, offsetMs: unknown): LocalZone {
  const known = typeof name === 'string' ? canonicalTimeZone(name) : null;
  const off = typeof offsetMs === 'number' && Number.isFinite(offsetMs) && Math.abs(offsetMs) <= 18 * 3_600_000 ? offsetMs : 0;
  return { name: known, offsetMs: off };
}

export type ZonedInstant = { ms: number; offset: string };

/**
 * A local date-time (or a date: its midnight) in `zone` → the instant and the offset in force.
 * A time skipped by a spring-forward change is read as the same wall time after the change; a
 * time repeated in autumn as its first occurrence (what the provider's device showed first).
 */
export function zonedInstant(local: unknown, zone: LocalZone, field: string): ZonedInstant {
  if (typeof local !== 'string') throw new RecordError(`${field} is ${local === undefined || local === null ? 'missing' : 'not a local date-time'}`);
  const m = LOCAL.exec(local);
  if (!m) throw new RecordError(`${field} ${JSON.stringify(local).slice(0, 64)} is not a local date-time`);
  const [y, mo, d, h, mi, s] = [+m[1]!, +m[2]!, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)];
  const ms = m[7] ? +m[7].slice(0, 3).padEnd(3, '0') : 0;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > days || h > 23 || mi > 59 || s > 59) throw new RecordError(`${field} ${JSON.stringify(local)} is not a valid date and time`);
  if (zone.name) {
    const t = DateTime.fromObject({ year: y, month: mo, day: d, hour: h, minute: mi, second: s, millisecond: ms }, { zone: zone.name });
    return { ms: t.toMillis(), offset: offsetText(t.offset * 60_000) };
  }
  return { ms: Date.UTC(y, mo - 1, d, h, mi, s, ms) - zone.offsetMs, offset: offsetText(zone.offsetMs) };
}

/** The offset ("+01:00") `zone` is at an instant. */
export function zonedOffset(ms: number, zone: LocalZone): string {
  return offsetText(zone.name ? DateTime.fromMillis(ms, { zone: zone.name }).offset * 60_000 : zone.offsetMs);
}

/** The local calendar date of an instant in `zone`. */
export function zonedDate(ms: number, zone: LocalZone): string {
  if (zone.name) return DateTime.fromMillis(ms, { zone: zone.name }).toISODate()!;
  return new Date(ms + zone.offsetMs).toISOString().slice(0, 10);
}

/** The local dates [first, last] an instant range [startMs, endMs) touches in `zone`. */
export function zonedDates(startMs: number, endMs: number, zone: LocalZone): string[] {
  const first = zonedDate(startMs, zone);
  const last = zonedDate(Math.max(startMs, endMs - 1), zone);
  const out: string[] = [];
  for (let d = first; d <= last; d = nextDate(d)) out.push(d);
  return out;
}

/** The calendar date after `date` (YYYY-MM-DD). */
export function nextDate(date: string, days = 1): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function offsetText(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  return normalOffset(`${ms < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`);
}
