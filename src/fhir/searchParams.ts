import { parseTimeParam } from '../shared/timeWindow.js';
import { LOINC } from './observationOfSample.js';

export class FhirSearchError extends Error {
  override name = 'FhirSearchError';
}

/** The LOINC codes of a `code` parameter (null without one): bare codes or `http://loinc.org|<code>`, comma separated. */
export function loincCodesOf(code: string | undefined): string[] | null {
  if (code === undefined) return null;
  const wanted = code.split(',').map((c) => {
    const bar = c.indexOf('|');
    if (bar === -1) return c.trim();
    if (c.slice(0, bar) !== LOINC) throw new FhirSearchError(`code system ${c.slice(0, bar)} is not served: use ${LOINC}`);
    return c.slice(bar + 1).trim();
  });
  if (wanted.some((c) => c === '')) throw new FhirSearchError('code has an empty value');
  return wanted;
}

const DAY_MS = 86_400_000;

/**
 * `date` values with prefixes ge, gt, le, lt, eq (none is eq), intersected into one window on the
 * sample's start (inclusive start, exclusive end). eq on a date is that UTC day; on a time, that instant.
 */
export function windowForDates(values: readonly string[]): { start: number | null; end: number | null } {
  let start: number | null = null;
  let end: number | null = null;
  const from = (ms: number) => (start = start === null ? ms : Math.max(start, ms));
  const until = (ms: number) => (end = end === null ? ms : Math.min(end, ms));
  for (const raw of values) {
    const m = /^(ge|gt|le|lt|eq)?(.+)$/.exec(raw);
    const prefix = m?.[1] ?? 'eq';
    const text = m?.[2] ?? '';
    const ms = parseTimeParam(text);
    if (ms === null) throw new FhirSearchError(`date ${raw} is not a date or an RFC 3339 time with a prefix ge, gt, le, lt or eq`);
    const isDay = /^\d{4}-\d{2}-\d{2}$/.test(text);
    const span = isDay ? DAY_MS : 1;
    if (prefix === 'ge') from(ms);
    else if (prefix === 'gt') from(ms + span);
    else if (prefix === 'lt') until(ms);
    else if (prefix === 'le') until(ms + span);
    else {
      from(ms);
      until(ms + span);
    }
  }
  if (start !== null && end !== null && end < start) throw new FhirSearchError('the date values leave no time between them');
  return { start, end };
}
