/**
 * Spec "Conventions" 2: `start` (inclusive) and `end` (exclusive) are RFC 3339 times or
 * `YYYY-MM-DD` dates (midnight UTC). Returns epoch milliseconds, or null when unparsable.
 */
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
/** The syntax parseTimeParam reads (its calendar checks aside), for the schemas that publish it (contracts §17: the input rules enforced). */
export const TIME_PARAM_SYNTAX = new RegExp(`${DATE_ONLY.source}|${RFC3339.source}`);

export function parseTimeParam(value: string): number | null {
  const d = DATE_ONLY.exec(value);
  if (d) {
    const ms = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]));
    const back = new Date(ms);
    return back.getUTCDate() === Number(d[3]) && back.getUTCMonth() === Number(d[2]) - 1 ? ms : null;
  }
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [, y, mo, da, hh, mi, ss] = m.map(Number) as number[];
  if (mo! < 1 || mo! > 12 || da! < 1 || hh! > 23 || mi! > 59 || ss! > 60) return null;
  // Date.parse rolls 2026-02-30 over into March; a day the month lacks is an error.
  if (new Date(Date.UTC(y!, mo! - 1, da!)).getUTCDate() !== da) return null;
  const ms = Date.parse(value.toUpperCase());
  return Number.isNaN(ms) ? null : ms;
}

export type TimeWindow = { start: number | null; end: number | null };

export class InvalidTimeWindowError extends Error {
  override name = 'InvalidTimeWindowError';
}

export function parseTimeWindow(start?: string, end?: string): TimeWindow {
  const s = start === undefined ? null : parseTimeParam(start);
  const e = end === undefined ? null : parseTimeParam(end);
  if (start !== undefined && s === null) throw new InvalidTimeWindowError('start is not an RFC 3339 time or a YYYY-MM-DD date');
  if (end !== undefined && e === null) throw new InvalidTimeWindowError('end is not an RFC 3339 time or a YYYY-MM-DD date');
  if (s !== null && e !== null && e < s) throw new InvalidTimeWindowError('end is before start');
  return { start: s, end: e };
}
