import type { Readable } from 'node:stream';
import { csvRows, type CsvSkipped } from './csvRows.js';

/**
 * A CSV file with a header row, handed over as named values. `preambleRows` rows come before the
 * header (Samsung Health's first line names the data type); `column` renames header cells (Samsung
 * prefixes many with the data type). Values are trimmed; a row shorter than the header leaves the
 * missing columns undefined, a longer one (Samsung's trailing comma) loses its extra cells.
 */

export type CsvHeader = { header: string[]; preamble: string[][]; line: number };
export type CsvRecord = { line: number; values: Record<string, string | undefined> };

export async function* csvTable(input: Readable, options: { preambleRows?: number; column?: (name: string) => string } = {}): AsyncGenerator<CsvHeader | CsvRecord | CsvSkipped> {
  const preamble: string[][] = [];
  let header: string[] | null = null;
  for await (const row of csvRows(input)) {
    if ('skipped' in row) {
      yield row;
      continue;
    }
    if (preamble.length < (options.preambleRows ?? 0)) {
      preamble.push(row.fields);
      continue;
    }
    if (!header) {
      header = row.fields.map((f) => (options.column ? options.column(f.trim()) : f.trim()));
      yield { header, preamble, line: row.line };
      continue;
    }
    const values: Record<string, string | undefined> = Object.create(null) as Record<string, string | undefined>;
    for (let i = 0; i < header.length; i++) {
      const v = row.fields[i];
      values[header[i]!] = v === undefined ? undefined : v.trim();
    }
    yield { line: row.line, values };
  }
}
