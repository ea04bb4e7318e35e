/** Days from 1970-01-01 to the civil date (proleptic Gregorian; any year). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Days in month `m` (1-12) of year `y` (proleptic Gregorian). */
export function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** The decimal value of `n` digits of `s` from `at`, or -1 if one is not a digit. */
export function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * Epoch ms of the wall time `YYYY-MM-DD?HH:MM:SS` at the start of `s` read as UTC (the character
 * between date and time is the caller's to check), NaN unless every field is digits and in range
 * (a day the month lacks too: Date.parse would roll 02-30 into March). Hand-written for speed: the
 * device-a parser reads two per line, the merged view two per sample of every day a batch touches.
 */
export function wallSecondsMs(s: string): number {
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN;
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  const h = digits(s, 11, 2);
  const mi = digits(s, 14, 2);
  const se = digits(s, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) return NaN;
  return daysFromCivil(y, mo, d) * 86_400_000 + h * 3_600_000 + mi * 60_000 + se * 1000;
}

/**
 * Epoch ms of `iso` when it is exactly what `Date.prototype.toISOString` writes for an instant of
 * years 0000-9999 (`YYYY-MM-DDTHH:MM:SS.sssZ`, 24 characters: two such times order as their ms
 * do, and the ms write back as the same string), else NaN (also for a value not a string). Read by arithmetic on its
 * characters: the merged view and the block codec read two such times of every sample of every day
 * a batch touches, and `Date.parse` was most of that (issue 38: ~6 % of the projector thread's CPU).
 * For such a string it answers what `Date.parse` does; a string of another form is NaN even where
 * `Date.parse` would read it (callers that take other forms fall back to it: `instantMs`).
 */
export function canonicalIsoMs(iso: unknown): number {
  if (typeof iso !== 'string' || iso.length !== 24 || iso.charCodeAt(10) !== 84 || iso.charCodeAt(19) !== 46 || iso.charCodeAt(23) !== 90) return NaN;
  const ms = digits(iso, 20, 3);
  return ms < 0 ? NaN : wallSecondsMs(iso) + ms;
}

/** Epoch ms of an ISO time as `Date.parse` reads it, the canonical form read without it (canonicalIsoMs). */
export function instantMs(iso: string): number {
  const ms = canonicalIsoMs(iso);
  return Number.isNaN(ms) ? Date.parse(iso) : ms;
}
