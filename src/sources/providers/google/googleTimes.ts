import { readInstant, type Instant } from '../../shared/providerTimes.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';

/**
 * Times as the Google Health API sends them: an instant (`physicalTime`, RFC 3339 in UTC) with the
 * user's offset beside it as a protobuf Duration (`utcOffset: "3600s"`), and civil dates as
 * `{year, month, day}`.
 */
function offsetOf(duration: unknown, field: string): string {
  if (duration === undefined || duration === null) return '+00:00';
  if (typeof duration !== 'string' || !/^-?\d{1,5}(\.\d+)?s$/.test(duration)) throw new RecordError(`${field} is not a duration such as "3600s"`);
  const seconds = Math.round(Number(duration.slice(0, -1)));
  if (Math.abs(seconds) > 18 * 3600) throw new RecordError(`${field} is more than 18 hours`);
  const minutes = Math.abs(seconds) / 60;
  return `${seconds < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(Math.round(minutes % 60)).padStart(2, '0')}`;
}

/** An instant and the user's offset at it. */
export function readPhysical(time: unknown, utcOffset: unknown, field: string): Instant {
  const at = readInstant(time, field);
  return { ms: at.ms, offset: offsetOf(utcOffset, `${field} offset`) };
}

export function readSampleTime(v: unknown): Instant {
  if (!isObject(v)) throw new RecordError('sampleTime is missing');
  return readPhysical(v.physicalTime, v.utcOffset, 'sampleTime.physicalTime');
}

export function readInterval(v: unknown): { start: Instant; end: Instant } {
  if (!isObject(v)) throw new RecordError('interval is missing');
  const start = readPhysical(v.startTime, v.startUtcOffset, 'interval.startTime');
  const end = readPhysical(v.endTime, v.endUtcOffset, 'interval.endTime');
  if (end.ms < start.ms) throw new RecordError('interval ends before it starts');
  return { start, end };
}

/** A civil date `{year, month, day}` as YYYY-MM-DD. */
export function readCivilDate(v: unknown): string {
  if (!isObject(v)) throw new RecordError('date is missing');
  const { year, month, day } = v as Json;
  if (![year, month, day].every((n) => typeof n === 'number' && Number.isInteger(n))) throw new RecordError('date is not {year, month, day}');
  const iso = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== iso) throw new RecordError(`date ${iso} is not a calendar date`);
  return iso;
}

/** Seconds of a protobuf Duration (`"1800s"`), or null when absent. */
export function durationSeconds(v: unknown, field: string): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !/^\d{1,9}(\.\d+)?s$/.test(v)) throw new RecordError(`${field} is not a duration such as "1800s"`);
  return Number(v.slice(0, -1));
}

/** An int64 as the JSON mapping of protobuf sends it (a decimal string) or a plain number. */
export function readNumber(v: unknown, field: string): number {
  const n = typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new RecordError(`${field} is ${v === undefined || v === null ? 'missing' : 'not a number'}`);
  return n;
}

export function optionalNumberOf(v: unknown, field: string): number | null {
  return v === undefined || v === null ? null : readNumber(v, field);
}
