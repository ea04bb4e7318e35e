/** Calendar days as the API takes them (YYYY-MM-DD, UTC) and the windows built from them. */

export const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

export const isoDay = (d: Date | number) => new Date(d).toISOString().slice(0, 10);

/** A real calendar day written YYYY-MM-DD (2026-02-30 is not one). */
export function isIsoDay(s: string): boolean {
  return ISO_DAY.test(s) && isoDay(Date.parse(`${s}T00:00:00Z`) || 0) === s;
}

export function addDays(day: string, n: number): string {
  return isoDay(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000);
}

/** The `n` days up to and including the day of `last` (end excluded, so end is the day after). */
export function daysEnding(n: number, last: Date | number = Date.now()): { start: string; end: string } {
  const end = addDays(isoDay(last), 1);
  return { start: addDays(end, -n), end };
}

/** The last `n` days, today included. */
export const daysBack = (n: number, now = new Date()) => daysEnding(n, now);
