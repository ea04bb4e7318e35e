import type { NormalizedRecord, ParseItem } from '../../../../commands/ingestion/records.js';
import { excerptOf } from '../../shared/connectorRecords.js';
import { SummaryError, type Summary } from './fields.js';

/** What a decoder needs besides the summary: the provider slug and where the summary sits in the payload. */
export type DecodeContext = { provider: string; location: string };

export type SummaryDecoder = (s: Summary, ctx: DecodeContext) => ParseItem[];

export const record = (r: NormalizedRecord): ParseItem => ({ record: r });

export function rejected(location: string, reason: string, offending: unknown): ParseItem {
  return { rejected: { location, reason, excerpt: excerptOf(offending) } };
}

/**
 * Runs one part of a summary (one sample of a map): a SummaryError rejects that part only, so one
 * implausible heart-rate sample does not cost the day. Other errors are bugs and propagate.
 */
export function part(ctx: DecodeContext, what: string, offending: unknown, build: () => NormalizedRecord | null): ParseItem[] {
  try {
    const r = build();
    return r ? [record(r)] : [];
  } catch (err) {
    if (!(err instanceof SummaryError)) throw err;
    return [rejected(ctx.location, `${what}: ${err.message}`, offending)];
  }
}
