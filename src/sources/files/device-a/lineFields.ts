import { createHash } from 'node:crypto';
import type { Metadata } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { isoOf, parseHealthKitDate } from './healthKitDates.js';

/** What every HealthKit line has: a uuid, its times, metadata; and the small readers of its fields. */

/** The line cannot be stored: the reason becomes its rejected item's. */
export function fail(reason: string): never {
  throw new RecordError(reason);
}

export function strOrNull(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

export function finite(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** At most `maxBytes` bytes of UTF-8, cut on a character boundary (rejected items' excerpt). */
export function excerptOf(s: string, maxBytes = 1024): string {
  if (s.length * 3 <= maxBytes) return s;
  let bytes = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const n = c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 4 : 3;
    if (bytes + n > maxBytes) break;
    bytes += n;
    if (n === 4) i++;
  }
  return s.slice(0, i);
}

export function sha32(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

export function uuidOf(o: Json): string {
  const u = o.uuid;
  if (typeof u !== 'string' || u === '') fail('missing uuid');
  return u;
}

export type Times = { start: number; end: number; start_date: string; end_date: string };

export function timesOf(o: Json): Times {
  const start = parseHealthKitDate(o.start_date);
  if (Number.isNaN(start)) fail(o.start_date === undefined ? 'missing start_date' : 'start_date is not a date-time with a time zone');
  // Instantaneous samples (heart rate, weight) repeat the start: one parse does for both.
  const end = o.end_date === o.start_date ? start : parseHealthKitDate(o.end_date);
  if (Number.isNaN(end)) fail(o.end_date === undefined ? 'missing end_date' : 'end_date is not a date-time with a time zone');
  if (end < start) fail('end_date is before start_date');
  const start_date = isoOf(o.start_date as string, start);
  return { start, end, start_date, end_date: end === start ? start_date : isoOf(o.end_date as string, end) };
}

/**
 * The line's HealthKit metadata (provider fields as sent) plus `timezone` (HKTimeZone, else null).
 * The object is the one JSON.parse just made for this line, so it is extended in place.
 */
export function metadataOf(o: Json): Metadata {
  const m = isObject(o.metadata) ? o.metadata : {};
  m.timezone = typeof m.HKTimeZone === 'string' && m.HKTimeZone !== '' ? m.HKTimeZone : null;
  return m;
}

export function wasUserEntered(o: Json, md: Metadata): boolean {
  return o.was_user_entered === true || md.HKWasUserEntered === true || md.HKWasUserEntered === 1;
}
