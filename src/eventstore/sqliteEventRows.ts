import { brotliCompressSync, brotliDecompressSync, constants as zlib } from 'node:zlib';
import type { RecordedEvent } from './eventStore.js';

/** The embedded event store's rows: the `events` table and how an event is written into it and read back. */

/** The columns and keys of the `events` table (the benchmarks build the same table). */
export const EVENTS_COLUMNS = `
        position   INTEGER PRIMARY KEY AUTOINCREMENT,
        id         TEXT    NOT NULL UNIQUE,
        stream     TEXT    NOT NULL,
        revision   INTEGER NOT NULL,
        type       TEXT    NOT NULL,
        data       TEXT    NOT NULL,
        metadata   TEXT,
        created_at INTEGER NOT NULL,
        UNIQUE (stream, revision)
      `;

export type EventRow = {
  position: number;
  id: string;
  stream: string;
  revision: number;
  type: string;
  /** JSON text, or the compressed JSON of a large event (see `encodeData`). */
  data: string | Buffer;
  metadata: string | null;
  created_at: number;
};

/** Event data whose JSON reaches this size is stored compressed. */
const COMPRESS_FROM = 1024;
/**
 * One read of the log (a subscription's page, a `readAll`) stops once it has decoded this much
 * event data, so that a page of 500 half-megabyte events never sits in memory at once.
 */
export const READ_BUDGET = 8 * 1024 * 1024;

/**
 * Small events stay readable JSON text; larger ones (record batches) are stored as a BLOB of
 * brotli at quality 1: on a batch of 1000 heart-rate samples it is ~13x smaller, a little
 * smaller than deflate at level 1 and faster to write. Both kinds of row read back the same, so
 * files written before compression keep working.
 */
export function encodeData(data: unknown): string | Buffer {
  const json = JSON.stringify(data);
  if (json.length < COMPRESS_FROM) return json;
  return brotliCompressSync(json, { params: { [zlib.BROTLI_PARAM_QUALITY]: 1, [zlib.BROTLI_PARAM_SIZE_HINT]: json.length } });
}

export function decodeData(data: string | Buffer): string {
  return typeof data === 'string' ? data : brotliDecompressSync(data).toString('utf8');
}

/** Decodes rows until `max` events or READ_BUDGET of data; stopping early ends the statement. */
export function readBounded(rows: IterableIterator<EventRow>, max: number): { events: RecordedEvent[]; more: boolean } {
  const events: RecordedEvent[] = [];
  let budget = READ_BUDGET;
  for (const row of rows) {
    const json = decodeData(row.data);
    events.push(toRecorded(row, json));
    budget -= json.length;
    if (budget <= 0 && events.length < max) {
      rows.return?.();
      return { events, more: true };
    }
  }
  return { events, more: events.length === max };
}

export function toRecorded(row: EventRow, json = decodeData(row.data)): RecordedEvent {
  return {
    id: row.id,
    type: row.type,
    data: JSON.parse(json),
    metadata: row.metadata ? JSON.parse(row.metadata) : {},
    streamName: row.stream,
    streamRevision: row.revision,
    globalPosition: row.position,
    createdAt: new Date(row.created_at),
  };
}
