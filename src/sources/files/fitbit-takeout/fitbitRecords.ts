import type { Metadata, NormalizedRecord, ParseItem, Provenance, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { quantity } from '../../shared/connectorRecords.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { num, requireNum } from '../../providers/fitbit/fitbitPayload.js';
import { csvTable } from '../exportShared/csvTable.js';
import { JsonArrayError, jsonArrayItems } from '../exportShared/jsonArrayItems.js';
import { readEntry } from '../exportShared/entryReading.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import type { ArchiveEntry, ZipArchive } from '../exportShared/zipArchive.js';

/**
 * The reading loops every Fitbit file shares: a JSON file's elements or a CSV file's rows, each
 * decoded alone; what cannot be decoded is rejected at `<entry path>:[<index>]` (JSON) or
 * `<entry path>:<line>` (CSV), and a file that breaks part-way keeps what came before the break.
 */

export const SOURCE = 'fitbit';

export function provenanceOf(provider: string, worn: { device: string | null; body_worn: boolean } = { device: null, body_worn: true }): Provenance {
  return { provider, source: SOURCE, ...worn };
}

export function fitbitQuantity(p: Provenance, q: { id: string; type: string; value: number; unit: string; start: number; end: number; metadata: Metadata; manual?: boolean }): QuantityRecord {
  const r = quantity(p, { external_id: q.id, type: q.type, value: q.value, unit: q.unit, start: q.start, end: q.end, metadata: q.metadata, was_user_entered: q.manual ?? false });
  return { ...r, source_name: 'Fitbit', device_model: p.device };
}

export type ElementDecoder = (element: Json) => NormalizedRecord[];
/** Decodes one element into items (records, and rejections of its parts at `location`). */
export type ElementItems = (element: Json, location: string) => ParseItem[];

export const asItems =
  (decode: ElementDecoder): ElementItems =>
  (element) =>
    decode(element).map((record) => ({ record }));

export function jsonFile(archive: ZipArchive, entry: ArchiveEntry, decode: ElementItems): AsyncGenerator<ParseItem> {
  return readEntry(
    archive,
    entry,
    async function* (input) {
      for await (const { index, value } of jsonArrayItems(input)) {
        const location = `${entry.name}:[${index}]`;
        let items: ParseItem[];
        try {
          if (!isObject(value)) throw new RecordError('not an object');
          items = decode(value, location);
        } catch (err) {
          if (!(err instanceof RecordError)) throw err;
          yield rejectedItem(location, err.message, value);
          continue;
        }
        yield* items;
      }
    },
    (err) => (err instanceof JsonArrayError ? rejectedItem(`${entry.name}:[${err.index}]`, `the rest of the file cannot be read: ${err.message}`, '') : null),
  );
}

export type RowDecoder = (values: Record<string, string | undefined>) => NormalizedRecord[];

export function csvFile(archive: ZipArchive, entry: ArchiveEntry, required: readonly string[], decode: RowDecoder): AsyncGenerator<ParseItem> {
  return readEntry(archive, entry, async function* (input) {
    for await (const item of csvTable(input)) {
      if ('skipped' in item) {
        yield rejectedItem(`${entry.name}:${item.skipped.line}`, item.skipped.reason, item.skipped.raw);
        continue;
      }
      if ('header' in item) {
        const missing = required.filter((c) => !item.header.includes(c));
        if (missing.length) {
          yield rejectedItem(`${entry.name}:${item.line}`, `the header lacks ${missing.join(', ')}: the file is not read`, item.header.join(','));
          return;
        }
        continue;
      }
      let records: NormalizedRecord[];
      try {
        records = decode(item.values);
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        yield rejectedItem(`${entry.name}:${item.line}`, err.message, Object.values(item.values).join(','));
        continue;
      }
      for (const record of records) yield { record };
    }
  });
}

/** A numeric cell ("95.8"); empty is null; "NaN" and words are errors. */
export function cellNumber(v: string | undefined, column: string): number | null {
  if (v === undefined || v === '') return null;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new RecordError(`${column} ${JSON.stringify(v).slice(0, 40)} is not a number`);
  return n;
}

export { num, requireNum };
