import type { Metadata } from '../../../../commands/ingestion/records.js';
import * as shared from '../../shared/connectorRecords.js';
import { SampleSummary } from '../../derivations/workoutSummaries.js';
import { isObject, RecordError as SummaryError, type Json as Summary } from '../../shared/connectorRecords.js';

/**
 * Reading Garmin's summaries: the shared connector readers by field name (Garmin leaves out what
 * the device did not measure), Garmin's epoch seconds, offsets in seconds and time-offset maps.
 * A summary (or part of one) that cannot be stored throws SummaryError: its message becomes the
 * rejected item's reason.
 */
export { isObject, SummaryError, type Summary };

export const optionalNumber = (s: Summary, field: string): number | null => shared.optionalNumber(s[field], field);
export const requiredNumber = (s: Summary, field: string): number => shared.requiredNumber(s[field], field);
export const optionalString = (s: Summary, field: string): string | null => (s[field] === '' ? null : shared.optionalString(s[field], field));

/** Garmin's epoch seconds (UTC), checked to be a plausible instant. */
export function epochSeconds(s: Summary, field: string): number {
  const v = requiredNumber(s, field);
  if (!Number.isInteger(v) || v < 0 || v > 4_102_444_800) throw new SummaryError(`${field} ${v} is not a Unix time in seconds`);
  return v;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `calendarDate`: the local day Garmin Connect shows the summary on. */
export function calendarDate(s: Summary, field = 'calendarDate'): string {
  const v = optionalString(s, field);
  if (v === null) throw new SummaryError(`${field} is missing`);
  const m = DATE.exec(v);
  if (!m || Number.isNaN(Date.parse(`${v}T00:00:00Z`)) || new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) !== v) {
    throw new SummaryError(`${field} ${JSON.stringify(v)} is not a date YYYY-MM-DD`);
  }
  return v;
}

/**
 * `startTimeOffsetInSeconds` (seconds to add to UTC for the device's local time) as a zone offset
 * such as "+02:00"; null when absent. Offsets beyond ±18 h are refused.
 */
export function zoneOffset(s: Summary, field = 'startTimeOffsetInSeconds'): string | null {
  const v = optionalNumber(s, field);
  if (v === null) return null;
  if (!Number.isInteger(v) || Math.abs(v) > 18 * 3600) throw new SummaryError(`${field} ${v} is not an offset of at most 18 hours`);
  const sign = v < 0 ? '-' : '+';
  const a = Math.abs(v);
  const hh = String(Math.floor(a / 3600)).padStart(2, '0');
  const mm = String(Math.floor((a % 3600) / 60)).padStart(2, '0');
  return `${sign}${hh}:${mm}`;
}

export const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * A time-offset map (`timeOffsetHeartRateSamples`, `hrvValues`, `timeOffsetSpo2Values`…): seconds
 * after the summary's start → value. Answers the entries in time order; entries that are not a
 * number (Garmin documents a missing key as "no data") are skipped; negative values are the
 * device's codes for "no reading" where the caller says so.
 */
export function offsetMap(s: Summary, field: string): { offset: number; value: number }[] {
  const v = s[field];
  if (v === undefined || v === null) return [];
  if (!isObject(v)) throw new SummaryError(`${field} is not an object of offsets`);
  const out: { offset: number; value: number }[] = [];
  for (const [k, value] of Object.entries(v)) {
    const offset = Number(k);
    if (!/^\d+$/.test(k) || !Number.isSafeInteger(offset)) throw new SummaryError(`${field} has a key ${JSON.stringify(k)} that is not an offset in seconds`);
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    out.push({ offset, value });
  }
  return out.sort((a, b) => a.offset - b.offset);
}

/** The zone metadata every record of a summary carries (contracts §4: metadata.timezone). */
export function zoneMetadata(zone: string | null): Metadata {
  return zone === null ? {} : { timezone: zone };
}

/** The summary's own fields as sent, minus the bulky maps a record already holds as records. */
export function summaryMetadata(s: Summary, omit: readonly string[] = []): Metadata {
  const m: Metadata = {};
  const skip = new Set(['userId', 'userAccessToken', ...omit]);
  for (const [k, v] of Object.entries(s)) if (!skip.has(k)) m[k] = v;
  return m;
}

/** The mean to one decimal, null without values. */
export function mean(values: readonly number[]): number | null {
  return SampleSummary.of(values).mean1;
}
