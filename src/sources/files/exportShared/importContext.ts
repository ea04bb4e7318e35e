import type { ParseContext } from '../../../../commands/ingestion/records.js';

/**
 * What an import may be told beyond ParseContext. The pipeline passes these from the upload's
 * metadata (the tus `Upload-Metadata` or the `POST /v1/ingest/{slug}` headers); a decoder works
 * without them.
 */
export type ImportContext = ParseContext & {
  /**
   * IANA time zone the uploader names (`tz`), for exports whose wall-clock times carry no offset
   * (Fitbit Takeout): it wins over the zone the export's profile names.
   */
  timeZone?: string | null;
};

export function uploadTimeZone(ctx: ParseContext): string | null {
  const tz = (ctx as ImportContext).timeZone;
  return typeof tz === 'string' && tz.trim() ? tz.trim() : null;
}
