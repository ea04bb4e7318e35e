import { Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
/**
 * A CSV file with a header row, handed over row by row as named values, through csv-parse: the
 * streaming parser of the `csv` project, long maintained and widely used, which handles quoted
 * cells with commas and line breaks and a byte order mark, and reports the file line of every
 * record (rejected items name it). A row it cannot read (an unclosed quote) comes back as
 * skipped, with its line; a record over MAX_RECORD_BYTES ends the file, so memory stays bounded.
 *
 * The header row is found after `skipLines` lines (Samsung Health writes a metadata line first);
 * `names` may rename the header's cells. `trailingComma` says the data rows carry one empty cell
 * more than the header (Samsung again): declaring it keeps every row of the expected length,
 * which matters, because csv-parse builds an error object for each row of another length.
 * Values are trimmed; an empty cell is undefined, as is a missing one.
 */

export type CsvHeader = { header: string[]; line: number };
export type CsvSkipped = { skipped: { line: number; reason: string; raw: string } };
export type CsvRecord = { line: number; values: Record<string, string | undefined> };

const TRAILING = '\u0000trailing';
export const MAX_RECORD_BYTES = 1024 * 1024;

export type CsvTableOptions = { skipLines?: number; names?: (cells: string[]) => string[]; trailingComma?: boolean };

export async function* csvTable(input: Readable, options: CsvTableOptions = {}): AsyncGenerator<CsvHeader | CsvRecord | CsvSkipped> {
  const skipped: CsvSkipped[] = [];
  let header: CsvHeader | null = null;
  const parser = parse({
    bom: true,
    info: true,
    raw: true,
    from_line: (options.skipLines ?? 0) + 1,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
    columns: (cells: string[]) => {
      const trimmed = cells.map((c) => c.trim());
      const names = options.names ? options.names(trimmed) : trimmed;
      header = { header: names, line: (options.skipLines ?? 0) + 1 };
      return options.trailingComma ? [...names, TRAILING] : names;
    },
    on_skip: (err: CsvError | undefined, raw: string | undefined) => {
      const lines = (err as { lines?: unknown } | undefined)?.lines;
      skipped.push({ skipped: { line: typeof lines === 'number' ? lines : 0, reason: err?.message ?? 'unreadable CSV row', raw: raw ?? '' } });
      return undefined;
    },
  });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let announced = false;
  for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    if (!announced && header) {
      announced = true;
      yield header;
    }
    while (skipped.length && skipped[0]!.skipped.line <= item.info.lines) yield skipped.shift()!;
    const values: Record<string, string | undefined> = Object.create(null) as Record<string, string | undefined>;
    for (const [k, v] of Object.entries(item.record)) {
      if (k === TRAILING) continue;
      const t = typeof v === 'string' ? v.trim() : undefined;
      values[k] = t === '' ? undefined : t;
    }
    yield { line: item.info.lines, values };
  }
  if (!announced && header) yield header;
  yield* skipped.splice(0);
}

/** The stream with its first chunk read: the caller can look at the file's start and still read all of it. */
export async function peekFirstChunk(input: Readable): Promise<{ head: Buffer; stream: Readable }> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await iterator.next();
  const head = first.done ? Buffer.alloc(0) : first.value;
  async function* all() {
    if (head.length) yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  const stream = Readable.from(all(), { objectMode: false });
  stream.on('close', () => void iterator.return?.());
  return { head, stream };
}
