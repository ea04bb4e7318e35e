import type { ParseItem } from '../../../commands/ingestion/records.js';
import { boundsChecker } from '../../../commands/ingestion/recordBounds.js';
import { excerptOf } from '../../sources/shared/connectorRecords.js';

/**
 * A parser's items with every record outside the interval bounds (recordBounds.ts) turned into a
 * rejected item that says why: the one check every source goes through on its way to the log
 * (runEtlJob.ts checks each item with `boundedItem`), whatever its parser.
 */
export async function* withinBounds(items: AsyncIterable<ParseItem>, receivedAt: string): AsyncIterable<ParseItem> {
  const check = boundsChecker(receivedAt);
  for await (const item of items) yield boundedItem(item, check);
}

/**
 * The item, or, for a record outside the bounds, a rejected item located by the record's kind and
 * external id (a record may have been built from many lines), its excerpt the record as normalised.
 */
export function boundedItem(item: ParseItem, check: ReturnType<typeof boundsChecker>): ParseItem {
  if (!('record' in item)) return item;
  const r = item.record;
  const reason = check(r);
  return reason ? { rejected: { location: `${r.kind} ${r.external_id.slice(0, 200)}`, reason, excerpt: excerptOf(r) } } : item;
}
