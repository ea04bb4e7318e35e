import type { ParseItem } from '../../../commands/ingestion/records.js';
import { boundsChecker } from '../../../commands/ingestion/recordBounds.js';
import { qualityFlagsOf } from '../../../commands/ingestion/recordQuality.js';
import { excerptOf } from '../../sources/shared/connectorRecords.js';

/**
 * A parser's items with every record outside the interval bounds (recordBounds.ts) turned into a
 * rejected item that says why, and every other record given its quality flags (recordQuality.ts,
 * contracts §15): the one check every source goes through on its way to the log (runEtlJob.ts
 * checks each item with `boundedItem`), whatever its parser.
 */
export async function* withinBounds(items: AsyncIterable<ParseItem>, receivedAt: string): AsyncIterable<ParseItem> {
  const check = boundsChecker(receivedAt);
  for await (const item of items) yield boundedItem(item, check, receivedAt);
}

/**
 * The item, or, for a record outside the bounds, a rejected item located by the record's kind and
 * external id (a record may have been built from many lines), its excerpt the record as normalised.
 * A record within the bounds gets its `quality` flags, judged against `receivedAt`.
 */
export function boundedItem(item: ParseItem, check: ReturnType<typeof boundsChecker>, receivedAt: string): ParseItem {
  if (!('record' in item)) return item;
  const r = item.record;
  const reason = check(r);
  if (reason) return { rejected: { location: `${r.kind} ${r.external_id.slice(0, 200)}`, reason, excerpt: excerptOf(r) } };
  r.quality = qualityFlagsOf(r, receivedAt);
  return item;
}
