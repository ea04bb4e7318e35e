import { boundedMemo } from './boundedCache.js';

/**
 * The canonical name of a time zone as a stranger spelled it ("europe/paris" → "Europe/Paris"), or
 * null when Intl does not know the zone. Zone names arrive in uploads (HKTimeZone) and query
 * parameters (`tz`) in any number of spellings of a few hundred zones; code that caches per zone
 * (Intl formatters here, luxon's IANAZone and formatter caches, which never evict) is given the
 * canonical name, so what it holds is bounded by the zones that exist. The memo of spellings is
 * itself bounded (src/shared/boundedCache.ts), unknown names included.
 */
export const canonicalTimeZone = boundedMemo((tz: string): string | null => {
  if (!tz) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
});
