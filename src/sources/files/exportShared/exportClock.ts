import type { Metadata, ParseContext } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import type { LocalZone } from '../../shared/zonedLocalTime.js';
import { uploadTimeZone } from './importContext.js';
import { LocalClock, namedZone, offsetText, UTC_ZONE, validWallTime, type WallTime } from './localClock.js';
import { UnreadableExportError } from './unreadableExport.js';

/**
 * Exports whose local times carry no offset (Fitbit Takeout, Dexcom Clarity) are read in one zone
 * for the whole upload, and every record says which it was (`metadata.timezone_source`,
 * contracts §17): `upload`, the zone the uploader named (`Upload-Time-Zone`, tus `tz`); `profile`,
 * the zone the export itself names (Fitbit's Profile.csv); `assumed_utc`, neither, read as UTC.
 */
export type ZoneSource = 'upload' | 'profile' | 'assumed_utc';

export class ExportClock {
  readonly clock: LocalClock;

  constructor(
    readonly zone: LocalZone,
    readonly source: ZoneSource,
  ) {
    this.clock = new LocalClock(zone);
  }

  /** A local wall-clock time → its instant. */
  local(t: WallTime): number {
    return this.clock.instant(t).ms;
  }

  /** What every record carries about the zone its times were read in. */
  metadata(ms: number): Metadata {
    const offset = offsetText(this.clock.offsetAt(ms));
    return { timezone: this.zone.name ?? offset, utc_offset: offset, timezone_source: this.source };
  }
}

/**
 * The zone the uploader named, or null when none. The routes refuse an unknown name (400), so one
 * here is an upload accepted before they checked: the import fails with the reason rather than
 * reading its times in a zone nobody named.
 */
export function uploaderZone(ctx: ParseContext): LocalZone | null {
  const named = uploadTimeZone(ctx);
  if (named === null) return null;
  const zone = namedZone(named);
  if (!zone) throw new UnreadableExportError('upload', `the time zone the upload names, ${JSON.stringify(named)}, is not an IANA time zone`);
  return zone;
}

/** The uploader's zone, else UTC (for formats that name no zone of their own). */
export function uploaderOrUtc(ctx: ParseContext): ExportClock {
  const zone = uploaderZone(ctx);
  return zone ? new ExportClock(zone, 'upload') : new ExportClock(UTC_ZONE, 'assumed_utc');
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z)?$/;

/** Calendar-checks a parsed wall time; `v` as written names it in the error. */
export function checkedWallTime(t: WallTime, v: string, field: string): WallTime {
  if (!validWallTime(t)) throw new RecordError(`${field} ${JSON.stringify(v)} is not a valid date and time`);
  return t;
}

/** `YYYY-MM-DD`, `YYYY-MM-DD[T ]HH:MM[:SS[.fff]]`, with or without a trailing Z (which Fitbit writes on local times too: the caller decides). */
export function isoWallTime(v: unknown, field: string): WallTime {
  const m = typeof v === 'string' ? ISO.exec(v.trim()) : null;
  if (!m) throw new RecordError(`${field} ${JSON.stringify(v)?.slice(0, 40)} is not an ISO date or date-time`);
  const ms = m[7] ? +m[7].slice(0, 3).padEnd(3, '0') : 0;
  return checkedWallTime({ y: +m[1]!, mo: +m[2]!, d: +m[3]!, h: +(m[4] ?? 0), mi: +(m[5] ?? 0), s: +(m[6] ?? 0), ms }, v as string, field);
}
