import type { Metadata } from '../../../../commands/ingestion/records.js';
import { daysInMonth } from '../../../shared/isoInstant.js';
import { RecordError, type Json } from '../../shared/recordError.js';

/** Health Connect's times: ISO-8601 instants with an offset, zone offsets, and a record's time frame. */

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)$/;
const ZONE_OFFSET = /^(?:Z|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?)$/;

/** Parses an ISO-8601 instant with an explicit offset into epoch milliseconds; calendar-checked. */
export function parseInstant(v: unknown, field: string): number {
  if (v === undefined || v === null) throw new RecordError(`${field} is missing`);
  if (typeof v !== 'string') throw new RecordError(`${field} is not an ISO-8601 instant`);
  const m = INSTANT.exec(v);
  if (!m) throw new RecordError(`${field} ${JSON.stringify(v)} is not an ISO-8601 instant with an offset`);
  const y = +m[1]!;
  const mo = +m[2]!;
  const d = +m[3]!;
  const h = +m[4]!;
  const mi = +m[5]!;
  const s = m[6] === undefined ? 0 : +m[6];
  const frac = m[7];
  const ms = frac === undefined ? 0 : frac.length >= 3 ? +frac.slice(0, 3) : +frac.padEnd(3, '0');
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) {
    throw new RecordError(`${field} ${JSON.stringify(v)} is not a valid date and time`);
  }
  const z = m[8]!;
  const off = z === 'Z' || z === 'z' ? 0 : offsetMs(z);
  if (off === null) throw new RecordError(`${field} ${JSON.stringify(v)} has an invalid offset`);
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms) - off;
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) throw new RecordError(`${field} ${JSON.stringify(v)} is out of range`);
  return t;
}

function offsetMs(z: string): number | null {
  const m = ZONE_OFFSET.exec(z.toUpperCase());
  if (!m) return null;
  if (!m[1]) return 0;
  const h = Number(m[2]);
  const mi = Number(m[3] ?? 0);
  const s = Number(m[4] ?? 0);
  if (h > 18 || mi > 59 || s > 59) return null;
  const total = ((h * 60 + mi) * 60 + s) * 1000;
  if (total > 18 * 3600 * 1000) return null;
  return m[1] === '-' ? -total : total;
}

/** A ZoneOffset as sent ("+01:00", "Z"), validated; undefined when absent. */
export function parseZone(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || offsetMs(v) === null) throw new RecordError(`${field} ${JSON.stringify(v)} is not a zone offset such as "+01:00"`);
  return v;
}

export const iso = (ms: number) => new Date(ms).toISOString();
/** The local calendar date of an instant at a zone offset (UTC without one). */
export const localDate = (ms: number, zone: string | undefined) => new Date(ms + (zone ? offsetMs(zone)! : 0)).toISOString().slice(0, 10);

export type Frame = { start: number; end: number; zone: string | undefined; endZone: string | undefined };

export function frame(rec: Json, shape: 'instant' | 'interval', strict = false): Frame {
  if (shape === 'instant') {
    const t = parseInstant(rec.time, 'time');
    const zone = parseZone(rec.zoneOffset, 'zoneOffset');
    return { start: t, end: t, zone, endZone: zone };
  }
  const start = parseInstant(rec.startTime, 'startTime');
  const end = parseInstant(rec.endTime, 'endTime');
  if (strict ? end <= start : end < start) throw new RecordError(`endTime is ${strict ? 'not after' : 'before'} startTime`);
  return { start, end, zone: parseZone(rec.startZoneOffset, 'startZoneOffset'), endZone: parseZone(rec.endZoneOffset, 'endZoneOffset') };
}

export function zoneMetadata(f: Frame): Metadata {
  const m: Metadata = {};
  if (f.zone !== undefined) m.timezone = f.zone;
  if (f.endZone !== undefined && f.endZone !== f.zone) m.end_timezone = f.endZone;
  return m;
}
