import { boundedMemo } from '../../../shared/boundedCache.js';
import { digits, wallSecondsMs } from '../../../shared/isoInstant.js';
import { canonicalTimeZone } from '../../../shared/timeZones.js';

/** HealthKit's dates: the export's date-times with a zone, and the local day of a sample. */

/**
 * Epoch milliseconds of a date-time with a zone, NaN otherwise. Accepts RFC 3339
 * (`2026-11-01T08:00:00Z`, `…T08:00:00.250+01:00`) and HealthKit's export form
 * (`2026-11-01 08:00:00 +0100`). A time without a zone is ambiguous and invalid, as is a day the
 * month lacks (Date.parse would roll 02-30 into March). Hand-written for speed: two dates per line.
 */
export function parseHealthKitDate(s: unknown): number {
  if (typeof s !== 'string' || s.length < 20) return NaN;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116 && t !== 32) return NaN;
  // Years before 1000 are not HealthKit's.
  if (s.charCodeAt(0) === 48) return NaN;
  const wall = wallSecondsMs(s);
  if (Number.isNaN(wall)) return NaN;
  let i = 19;
  let ms = 0;
  if (s.charCodeAt(i) === 46) {
    i++;
    const from = i;
    let scale = 100;
    for (let c = s.charCodeAt(i) - 48; c >= 0 && c <= 9; c = s.charCodeAt(++i) - 48) {
      ms += c * scale;
      scale /= 10;
    }
    if (i === from) return NaN;
    ms = Math.floor(ms);
  }
  if (s.charCodeAt(i) === 32) i++;
  const z = s.charCodeAt(i);
  let offsetMin = 0;
  if (z === 90 || z === 122) i++;
  else if (z === 43 || z === 45) {
    const oh = digits(s, i + 1, 2);
    let j = i + 3;
    if (s.charCodeAt(j) === 58) j++;
    const om = digits(s, j, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return NaN;
    offsetMin = (oh * 60 + om) * (z === 43 ? 1 : -1);
    i = j + 2;
  } else return NaN;
  if (i !== s.length) return NaN;
  return wall + ms - offsetMin * 60_000;
}

/**
 * `toISOString()` of a date parseHealthKitDate accepted. Most lines already carry the canonical
 * UTC form (`…T08:00:00Z` or `…T08:00:00.000Z`), which is rebuilt from the string: a Date and its
 * toISOString cost more per line than JSON.parse of the rest of it.
 */
export function isoOf(s: string, ms: number): string {
  if (s.charCodeAt(10) === 84) {
    if (s.length === 20 && s.charCodeAt(19) === 90) return `${s.slice(0, 19)}.000Z`;
    if (s.length === 24 && s.charCodeAt(19) === 46 && s.charCodeAt(23) === 90) return s;
  }
  return new Date(ms).toISOString();
}

/**
 * Day formatters per canonical zone (src/shared/timeZones.ts): HKTimeZone is the uploader's string,
 * so every spelling of a zone shares one formatter and the cache is bounded anyway.
 */
const dayFormats = boundedMemo((zone) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }));

/** YYYY-MM-DD of an instant in the sample's time zone (UTC when none or unknown). */
export function localDate(ms: number, tz: string | null): string {
  const zone = tz ? canonicalTimeZone(tz) : null;
  if (zone) {
    const parts = dayFormats(zone).formatToParts(ms);
    const get = (type: string) => parts.find((x) => x.type === type)?.value ?? '';
    return `${get('year')}-${get('month')}-${get('day')}`;
  }
  return new Date(ms).toISOString().slice(0, 10);
}
