import { RecordError } from '../../shared/recordError.js';
import { checkedWallTime, ExportClock, isoWallTime } from '../exportShared/exportClock.js';
import { UTC_ZONE, type WallTime } from '../exportShared/localClock.js';

/**
 * Fitbit's files write times without an offset, some in the user's local time and some in UTC
 * (docs/formats/fitbit-takeout.md "Times": heart rate and exercise start times are UTC, steps,
 * sleep, weight and the daily files local). Local times are read in one zone for the whole
 * export: the one the uploader names (`tz`), else the profile's, else UTC, and every record says
 * which (`metadata.timezone_source`, exportShared/exportClock.ts).
 */
export class TakeoutClock extends ExportClock {
  static utc(): TakeoutClock {
    return new TakeoutClock(UTC_ZONE, 'assumed_utc');
  }

  /** A UTC wall-clock time → its instant. */
  utc(t: WallTime): number {
    return Date.UTC(t.y, t.mo - 1, t.d, t.h, t.mi, t.s, t.ms);
  }

  /** The local day [midnight, next midnight) of a date. */
  day(date: string): { start: number; end: number } {
    const d = dateFields(date);
    const next = new Date(Date.UTC(d.y, d.mo - 1, d.d + 1));
    return { start: this.local(d), end: this.local({ y: next.getUTCFullYear(), mo: next.getUTCMonth() + 1, d: next.getUTCDate(), h: 0, mi: 0, s: 0, ms: 0 }) };
  }
}

const US = /^(\d{2})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const US_DATE = /^(\d{2})\/(\d{2})\/(\d{2})$/;

/** `MM/DD/YY HH:MM:SS` (the JSON files; two-digit years are 20YY). */
export function usDateTime(v: unknown, field: string): WallTime {
  const m = typeof v === 'string' ? US.exec(v) : null;
  if (!m) throw new RecordError(`${field} ${JSON.stringify(v)?.slice(0, 40)} is not MM/DD/YY HH:MM:SS`);
  return checkedWallTime({ y: 2000 + +m[3]!, mo: +m[1]!, d: +m[2]!, h: +m[4]!, mi: +m[5]!, s: +m[6]!, ms: 0 }, v as string, field);
}

/** `MM/DD/YY` (weight logs' `date`). */
export function usDate(v: unknown, field: string): string {
  const m = typeof v === 'string' ? US_DATE.exec(v) : null;
  if (!m) throw new RecordError(`${field} ${JSON.stringify(v)?.slice(0, 40)} is not MM/DD/YY`);
  const t = checkedWallTime({ y: 2000 + +m[3]!, mo: +m[1]!, d: +m[2]!, h: 0, mi: 0, s: 0, ms: 0 }, v as string, field);
  return `${t.y}-${String(t.mo).padStart(2, '0')}-${String(t.d).padStart(2, '0')}`;
}

export function dateFields(date: string): WallTime {
  return isoWallTime(date, 'date');
}

/** The calendar date of a wall time. */
export function dateOf(t: WallTime): string {
  return `${t.y}-${String(t.mo).padStart(2, '0')}-${String(t.d).padStart(2, '0')}`;
}
