import { canonicalTimeZone } from '../../shared/timeZones.js';
import { problems } from '../problems.js';

/**
 * contracts §17: the zone an uploader names for an export whose local times carry no offset
 * (`Upload-Time-Zone` on `POST /v1/ingest/{slug}`, `tz` in a tus upload's metadata). Checked where
 * it arrives, before anything is stored, so an unknown name is a 400 and not an import that fails
 * later; kept by its canonical name, so every run of the job reads the same zone. Null when the
 * uploader named none.
 */
export function uploadTimeZoneOf(value: unknown, what: string): string | null {
  if (value === undefined) return null;
  const name = typeof value === 'string' ? value.trim() : '';
  const zone = name && name.length <= 100 ? canonicalTimeZone(name) : null;
  if (!zone) throw problems.badRequest(`${what} must be an IANA time zone such as Europe/Berlin; ${JSON.stringify(String(value).slice(0, 100))} is not one`);
  return zone;
}
