import { offsetMs, readInstant, type Instant } from '../../shared/providerTimes.js';
import { RecordError } from '../../shared/recordError.js';

const NAIVE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?$/;

/**
 * Dexcom's `systemTime` is the instant (nominally UTC); records from a receiver carry no offset,
 * records from the phone apps do. A time without an offset is read as UTC.
 */
export function readSystemTime(v: unknown, field = 'systemTime'): Instant {
  if (typeof v === 'string' && NAIVE.test(v)) return readInstant(`${v}Z`, field);
  return readInstant(v, field);
}

/**
 * The user's local offset at a record: `displayTime` is the wall clock the receiver showed, so
 * its distance from `systemTime` is the offset, rounded to the quarter hour (receiver clocks
 * drift). Null when displayTime is absent, unreadable or more than 18 hours away.
 */
export function localOffset(systemMs: number, displayTime: unknown): string | null {
  if (typeof displayTime !== 'string') return null;
  const wall = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})/.exec(displayTime);
  if (!wall) return null;
  let wallMs: number;
  try {
    wallMs = readInstant(`${wall[1]}Z`, 'displayTime').ms;
  } catch (err) {
    if (err instanceof RecordError) return null;
    throw err;
  }
  const quarters = Math.round((wallMs - systemMs) / 900_000);
  const minutes = quarters * 15;
  if (Math.abs(minutes) > 18 * 60) return null;
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return offsetMs(offset) === null ? null : offset;
}

/** The `startDate`/`endDate` form Dexcom's queries take: UTC without an offset, to the second. */
export const dexcomQueryTime = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19);
