import type { Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';

/**
 * A CSV entry read row by row through csv-parse: the streaming parser of the `csv` project, long
 * maintained and used widely, which handles quoted fields with commas and line breaks, a byte
 * order mark, rows longer than their header (Samsung ends every row with a comma), and reports the
 * file line of every record, which rejected items name. A row the parser cannot read (an
 * unterminated quote) is handed back as skipped, with its line, and the reading goes on; a record
 * larger than MAX_RECORD_BYTES ends the file (memory stays bounded by it).
 */

export const MAX_RECORD_BYTES = 1024 * 1024;

export type CsvRow = { fields: string[]; line: number };
export type CsvSkipped = { skipped: { line: number; reason: string; raw: string } };

export async function* csvRows(input: Readable): AsyncGenerator<CsvRow | CsvSkipped> {
  const skipped: CsvSkipped[] = [];
  const parser = parse({
    bom: true,
    info: true,
    raw: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
    on_skip: (err: CsvError | undefined, raw: string | undefined) => {
      skipped.push({ skipped: { line: lineOf(err), reason: err?.message ?? 'unreadable CSV row', raw: raw ?? '' } });
      return undefined;
    },
  });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    while (skipped.length && skipped[0]!.skipped.line <= item.info.lines) yield skipped.shift()!;
    yield { fields: item.record, line: item.info.lines };
  }
  yield* skipped.splice(0);
}

function lineOf(err: CsvError | undefined): number {
  const lines = (err as { lines?: unknown } | undefined)?.lines;
  return typeof lines === 'number' ? lines : 0;
}
