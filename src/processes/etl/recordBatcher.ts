import { createHash, type Hash } from 'node:crypto';
import { MAX_EVENT_JSON_BYTES, MAX_RECORDS_PER_EVENT } from '../../../commands/ingestion/records.js';

export type Batch<T> = {
  items: T[];
  /**
   * SHA-256 of the items' JSON. Part of the event id, so that a re-run whose output differs
   * from what a crashed run stored (another parser version) collides with the stored event at
   * its revision instead of being taken for a replay of it.
   */
  digest: string;
  /** The items as a JSON array, from the text each was measured by (sealing encrypts this, without serialising again). */
  json: string;
};

export type BatchLimits = { maxBytes: number; maxItems: number };

/**
 * Cuts the items of one kind, in the order a parser yields them, into the arrays of successive
 * events: at most `maxItems` per event, and at most `maxBytes` of UTF-8 JSON once put in the
 * event's envelope. The cut depends on nothing but the items, so the same payload is always cut
 * the same way and a re-run after a crash appends the same events.
 */
export class RecordBatcher<T> {
  private items: T[] = [];
  private jsons: string[] = [];
  private bytes: number;
  private hash: Hash = createHash('sha256');

  /** `envelopeBytes`: the event's data JSON with an empty items array. */
  constructor(
    private readonly envelopeBytes: number,
    private readonly limits: BatchLimits = { maxBytes: MAX_EVENT_JSON_BYTES, maxItems: MAX_RECORDS_PER_EVENT },
  ) {
    this.bytes = envelopeBytes;
  }

  /** Adds an item; returns the batch that had to be closed to make room for it, if any. */
  add(item: T): Batch<T> | null {
    const json = JSON.stringify(item);
    // The comma before it; one too many for the first item, which errs on the safe side.
    const bytes = Buffer.byteLength(json) + 1;
    const full = this.items.length >= this.limits.maxItems || (this.items.length > 0 && this.bytes + bytes > this.limits.maxBytes);
    const closed = full ? this.take() : null;
    // A single item over the size limit still goes, alone: a record is never split.
    this.items.push(item);
    this.jsons.push(json);
    this.bytes += bytes;
    this.hash.update(json);
    return closed;
  }

  /** Closes the batch being filled (at the end of the payload); null when it is empty. */
  take(): Batch<T> | null {
    if (this.items.length === 0) return null;
    const batch = { items: this.items, digest: this.hash.digest('hex'), json: `[${this.jsons.join(',')}]` };
    this.items = [];
    this.jsons = [];
    this.bytes = this.envelopeBytes;
    this.hash = createHash('sha256');
    return batch;
  }
}

/** The size of an event's data JSON with the given (empty) items; `batch` counts at its widest. */
export function envelopeBytes(data: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify({ ...data, batch: Number.MAX_SAFE_INTEGER }));
}
