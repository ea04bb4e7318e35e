import type { Metadata } from '../../../../commands/ingestion/records.js';
import { isObject, optionalNumber, RecordError, requiredString, type Json } from '../../shared/connectorRecords.js';
import { normalOffset, readInstant, type Instant } from '../../shared/providerTimes.js';

/**
 * What WHOOP's cycle, sleep and workout documents share: `start`/`end` in UTC with the user's
 * offset beside them in `timezone_offset`, and a `score` present only when `score_state` is
 * SCORED (PENDING_SCORE while WHOOP computes it, UNSCORABLE when it never will).
 */
export type Span = { start: Instant; end: Instant | null; zone: Metadata };

export function spanOf(doc: Json): Span {
  const start = readInstant(doc.start, 'start');
  const end = doc.end === undefined || doc.end === null ? null : readInstant(doc.end, 'end');
  if (end && end.ms < start.ms) throw new RecordError('end is before start');
  const tz = doc.timezone_offset;
  if (tz !== undefined && tz !== null && typeof tz !== 'string') throw new RecordError('timezone_offset is not a string');
  return { start, end, zone: typeof tz === 'string' ? { timezone: normalOffset(tz) } : {} };
}

/** The score when WHOOP has scored the document, else null. */
export function scoreOf(doc: Json): Json | null {
  const state = requiredString(doc.score_state, 'score_state');
  if (state !== 'SCORED') return null;
  if (!isObject(doc.score)) throw new RecordError('score_state is SCORED but score is missing');
  return doc.score;
}

/** A non-negative number, or null. */
export function amount(o: Json, field: string, path = field): number | null {
  const v = optionalNumber(o[field], path);
  if (v !== null && v < 0) throw new RecordError(`${path} is negative`);
  return v;
}

/** Milliseconds to whole seconds (WHOOP sends durations in ms). */
export const secondsOf = (ms: number | null): number => Math.round((ms ?? 0) / 1000);
