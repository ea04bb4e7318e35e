import { Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import { CSV_LIMITS } from './parserLimits.js';

/**
 * A CSV file with a header row, handed over row by row as named values, through csv-parse: the
 * streaming parser of the `csv` project, long maintained and widely used, which handles quoted
 * cells with commas and line breaks and a byte order mark, and reports the file line of every
 * record (rejected items name it). A row it cannot read (an unclosed quote) comes back as
 * skipped, with its line. A record over MAX_RECORD_BYTES ends the file with one skipped item
 * naming it: csv-parse, left to skip it, would hand `on_skip` the record's whole raw text again
 * for every chunk that follows (issue 34: an 8 MB line held ~472 MB of strings), and where such a
 * record ends cannot be known (a quote may be open), so nothing after it can be trusted as rows.
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
export const MAX_RECORD_BYTES = CSV_LIMITS.maxRecordBytes;

/** Thrown inside csv-parse's `on_skip` to stop the parser: it comes back through the write's callback. */
class StopReading extends Error {
  constructor(readonly item: CsvSkipped) {
    super(item.skipped.reason);
  }
}

/** A short copy of a raw row, not a slice that would keep the whole row's string alive. */
function excerptOfRaw(raw: string | undefined): string {
  return raw ? Buffer.from(raw.slice(0, CSV_LIMITS.excerptChars)).toString() : '';
}

export type CsvTableOptions = { skipLines?: number; names?: (cells: string[]) => string[]; trailingComma?: boolean };

export async function* csvTable(input: Readable, options: CsvTableOptions = {}): AsyncGenerator<CsvHeader | CsvRecord | CsvSkipped> {
  // Rows and skipped rows land here in file order, as the parser meets them; nothing is pushed
  // through the parser's own readable side, whose buffered rows a stop would throw away.
  const ready: (CsvHeader | CsvRecord | CsvSkipped)[] = [];
  let skippedInARow = 0;
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
      ready.push({ header: names, line: (options.skipLines ?? 0) + 1 });
      return options.trailingComma ? [...names, TRAILING] : names;
    },
    on_record: (item: { record: Record<string, string>; info: { lines: number } }) => {
      skippedInARow = 0;
      const values: Record<string, string | undefined> = Object.create(null) as Record<string, string | undefined>;
      for (const [k, v] of Object.entries(item.record)) {
        if (k === TRAILING) continue;
        const t = typeof v === 'string' ? v.trim() : undefined;
        values[k] = t === '' ? undefined : t;
      }
      ready.push({ line: item.info.lines, values });
      return null;
    },
    on_skip: (err: CsvError | undefined, raw: string | undefined) => {
      const lines = (err as { lines?: unknown } | undefined)?.lines;
      const line = typeof lines === 'number' ? lines : 0;
      if (err?.code === 'CSV_MAX_RECORD_SIZE') {
        throw new StopReading({ skipped: { line, reason: `a record longer than ${MAX_RECORD_BYTES} bytes starts at line ${line}: the rest of the file is not read`, raw: excerptOfRaw(raw) } });
      }
      // A chunk of the file is parsed whole before its rows are handed on: a run of bad rows long
      // enough to make that a burden ends the file too.
      if (++skippedInARow > CSV_LIMITS.maxSkippedInARow) {
        throw new StopReading({ skipped: { line, reason: `more than ${CSV_LIMITS.maxSkippedInARow} unreadable rows in a row: the rest of the file is not read`, raw: excerptOfRaw(raw) } });
      }
      ready.push({ skipped: { line, reason: err?.message ?? 'unreadable CSV row', raw: excerptOfRaw(raw) } });
      return undefined;
    },
  });
  // The readable side only ever ends: drain it so the parser can finish. A write's error comes
  // back through its callback; the 'error' event that follows it has nothing more to say.
  parser.resume();
  parser.on('error', () => {});
  const write = (chunk?: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const done = (err?: Error | null) => (err ? reject(err) : resolve());
      if (chunk) parser.write(chunk, done);
      else parser.end(done);
    });
  try {
    for await (const chunk of input) {
      await write(chunk as Buffer);
      yield* ready.splice(0);
    }
    await write();
    yield* ready.splice(0);
  } catch (err) {
    if (!(err instanceof StopReading)) throw err;
    yield* ready.splice(0);
    yield err.item;
  } finally {
    parser.destroy();
  }
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
