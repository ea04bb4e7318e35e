import { createHash, type Hash } from 'node:crypto';
import { MAX_EVENT_JSON_BYTES, MAX_RECORDS_PER_EVENT } from '../../../commands/ingestion/records.js';

export type Batch<T> = {
  /** What was kept of each item (`RecordBatcher.add`), in order: one per item of the event. */
  items: T[];
  /**
   * SHA-256 of the items' JSON. Part of the event id, so that a re-run whose output differs
   * from what a crashed run stored (another parser version) collides with the stored event at
   * its revision instead of being taken for a replay of it.
   */
  digest: string;
  /**
   * The items as a JSON array, UTF-8, from the text each was measured by (sealing compresses and
   * encrypts these bytes, without serialising again). Outside V8's heap: see `RecordBatcher`.
   */
  json: Buffer;
};

export type BatchLimits = { maxBytes: number; maxItems: number };

/**
 * Bytes the first batch's JSON buffer starts with; it doubles as items come (an event is 512 KiB
 * at most, one oversized item aside), and a later batch of the same batcher starts as large as the
 * last one grew. Small, and taken at the first item: a job makes a batcher per record kind and one
 * for its rejections, most of them empty or of one line (a phone's upload); buffers taken up front
 * at 64 KiB each made V8 count ~190 KiB of external memory per one-line upload, and collect for it.
 */
const FIRST_BUFFER_BYTES = 4 * 1024;

/** No buffer yet: taken at the batch's first item. */
const NONE = Buffer.alloc(0);

/**
 * Cuts the items of one kind, in the order a parser yields them, into the arrays of successive
 * events: at most `maxItems` per event, and at most `maxBytes` of UTF-8 JSON once put in the
 * event's envelope. The cut depends on nothing but the items, so the same payload is always cut
 * the same way and a re-run after a crash appends the same events.
 *
 * Each item's JSON is written at once as UTF-8 into a buffer outside V8's heap, and the batch
 * keeps of the item only what its caller asks (`add`'s `kept`): a sealed job keeps a record's
 * fingerprint, not the record, nor its JSON as a string. An event holds up to 1,000 records, so
 * what a batch keeps on the heap outlives a few of an ETL thread's scavenges and is promoted, to
 * be marked and swept there (issue 38: the records and their strings in open batches were most of
 * what a bulk job's thread promoted).
 */
export class RecordBatcher<T> {
  private items: T[] = [];
  private buf: Buffer = NONE;
  /** Bytes of `buf` written: `[`, then the items' JSON separated by commas (0: no buffer yet). */
  private used = 0;
  /** The size of the next batch's buffer. */
  private nextSize = FIRST_BUFFER_BYTES;
  private bytes: number;
  private hash: Hash = createHash('sha256');

  /** `envelopeBytes`: the event's data JSON with an empty items array. */
  constructor(
    private readonly envelopeBytes: number,
    private readonly limits: BatchLimits = { maxBytes: MAX_EVENT_JSON_BYTES, maxItems: MAX_RECORDS_PER_EVENT },
  ) {
    this.bytes = envelopeBytes;
  }

  /**
   * Adds an item whose JSON is `json` (by default the item's own), keeping `kept` of it for its
   * batch (by default the item); returns the batch that had to be closed to make room for it, if any.
   */
  add(item: T, json?: string): Batch<T> | null;
  add<I>(item: I, json: string, kept: T): Batch<T> | null;
  add(item: unknown, json: string = JSON.stringify(item), kept: T = item as T): Batch<T> | null {
    const length = Buffer.byteLength(json);
    // The comma before it; one too many for the first item, which errs on the safe side.
    const bytes = length + 1;
    const full = this.items.length >= this.limits.maxItems || (this.items.length > 0 && this.bytes + bytes > this.limits.maxBytes);
    const closed = full ? this.take() : null;
    // A single item over the size limit still goes, alone: a record is never split.
    if (this.used === 0) {
      this.buf = opened(this.nextSize);
      this.used = 1;
    }
    this.room(length + 1);
    if (this.items.length > 0) this.buf[this.used++] = 0x2c;
    this.used += this.buf.write(json, this.used);
    this.items.push(kept);
    this.bytes += bytes;
    this.hash.update(json);
    return closed;
  }

  /** Closes the batch being filled (at the end of the payload); null when it is empty. */
  take(): Batch<T> | null {
    if (this.items.length === 0) return null;
    this.buf[this.used++] = 0x5d;
    const batch = { items: this.items, digest: this.hash.digest('hex'), json: this.buf.subarray(0, this.used) };
    this.items = [];
    // The closed batch keeps its buffer: the next one takes its own at its first item, as large
    // (the items of one kind are much alike), unless one oversized item had grown it.
    this.nextSize = this.buf.length <= this.limits.maxBytes * 2 ? this.buf.length : FIRST_BUFFER_BYTES;
    this.buf = NONE;
    this.used = 0;
    this.bytes = this.envelopeBytes;
    this.hash = createHash('sha256');
    return batch;
  }

  /** Room for `n` more bytes (and the closing bracket) in `buf`. */
  private room(n: number): void {
    if (this.used + n + 1 <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.used + n + 1) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    // Copied from 0: the opening bracket and the items so far.
    this.buf.copy(grown, 0, 0, this.used);
    this.buf = grown;
  }
}

/** A buffer for a batch's JSON, the array opened. */
function opened(size: number): Buffer {
  const buf = Buffer.allocUnsafeSlow(size);
  buf[0] = 0x5b;
  return buf;
}

/** The size of an event's data JSON with the given (empty) items; `batch` counts at its widest. */
export function envelopeBytes(data: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify({ ...data, batch: Number.MAX_SAFE_INTEGER }));
}
