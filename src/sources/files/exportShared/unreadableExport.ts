import type { ParseItem } from '../../../../commands/ingestion/records.js';
import { excerptOf } from '../../shared/connectorRecords.js';

/**
 * The upload as a whole cannot be the format it was named as (not a readable zip, a zip without
 * the format's entries, a database that fails its integrity check). Decoders throw it before
 * yielding any record, so the pipeline can mark the upload `failed` with this message as its
 * `error` (contracts §12); `location` names where in the upload the problem was seen.
 *
 * Anything else a decoder throws is a bug or an I/O failure of the byte source, not a verdict on
 * the upload.
 */
export class UnreadableExportError extends Error {
  constructor(
    readonly location: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnreadableExportError';
  }
}

/** A rejected item (contracts §12 `rejections[].at` is `location`); the excerpt is cut to 1 KiB. */
export function rejectedItem(location: string, reason: string, excerpt: unknown): ParseItem {
  return { rejected: { location, reason, excerpt: excerptOf(excerpt ?? '') } };
}

export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
