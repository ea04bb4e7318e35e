/** Days from 1970-01-01 to the civil date (proleptic Gregorian; any year). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The decimal value of `n` digits of `s` from `at`, or -1 if one is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * Epoch ms of `iso` when it is exactly what `Date.prototype.toISOString` writes for an instant of
 * years 0000-9999 (`YYYY-MM-DDTHH:MM:SS.sssZ`, 24 characters), else NaN. Read by arithmetic on its
 * characters: the merged view and the block codec read two such times of every sample of every day
 * a batch touches, and `Date.parse` was most of that (issue 38: ~6 % of the projector thread's CPU).
 * For such a string it answers what `Date.parse` does; a string of another form is NaN even where
 * `Date.parse` would read it (callers that take other forms fall back to it: `instantMs`).
 */
export function canonicalIsoMs(iso: string): number {
  if (iso.length !== 24 || iso.charCodeAt(4) !== 45 || iso.charCodeAt(7) !== 45 || iso.charCodeAt(10) !== 84 || iso.charCodeAt(13) !== 58 || iso.charCodeAt(16) !== 58 || iso.charCodeAt(19) !== 46 || iso.charCodeAt(23) !== 90) return NaN;
  const y = digits(iso, 0, 4);
  const mo = digits(iso, 5, 2);
  const d = digits(iso, 8, 2);
  const h = digits(iso, 11, 2);
  const mi = digits(iso, 14, 2);
  const s = digits(iso, 17, 2);
  const ms = digits(iso, 20, 3);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ms < 0) return NaN;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!)) return NaN;
  return daysFromCivil(y, mo, d) * 86_400_000 + h * 3_600_000 + mi * 60_000 + s * 1000 + ms;
}

/** Epoch ms of an ISO time as `Date.parse` reads it, the canonical form read without it (canonicalIsoMs). */
export function instantMs(iso: string): number {
  const ms = canonicalIsoMs(iso);
  return Number.isNaN(ms) ? Date.parse(iso) : ms;
}
