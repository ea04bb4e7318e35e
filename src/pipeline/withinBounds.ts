import type { ParseItem } from '../../commands/ingestion/records.js';
import { recordBoundsViolation } from '../../commands/ingestion/recordBounds.js';
import { excerptOf } from '../connectors/shared/connectorRecords.js';

/**
 * A parser's items with every record outside the interval bounds (recordBounds.ts) turned into a
 * rejected item that says why: the one check every source goes through on its way to the log
 * (runEtlJob.ts), whatever its parser. Located by the record's kind and external id, since a
 * record may have been built from many lines.
 */
export async function* withinBounds(items: AsyncIterable<ParseItem>, receivedAt: string): AsyncIterable<ParseItem> {
  for await (const item of items) {
    if ('record' in item) {
      const r = item.record;
      const reason = recordBoundsViolation(r, receivedAt);
      if (reason) {
        yield { rejected: { location: `${r.kind} ${r.external_id.slice(0, 200)}`, reason, excerpt: excerptOf(r) } };
        continue;
      }
    }
    yield item;
  }
}
