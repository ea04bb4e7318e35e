import { describe, expect, it } from 'vitest';
import { MAX_EVENT_JSON_BYTES, MAX_RECORDS_PER_EVENT } from '../../../commands/ingestion/records.js';
import { envelopeBytes, RecordBatcher, type Batch } from '../../../src/processes/etl/recordBatcher.js';

type Item = { id: number; text: string };

/** Feeds every item, then closes the last batch, as runEtlJob does. */
function cut(items: Item[], envelope: Record<string, unknown> = { job: 'upload-u-x', records: [] }): Batch<Item>[] {
  const batcher = new RecordBatcher<Item>(envelopeBytes(envelope));
  const out: Batch<Item>[] = [];
  for (const item of items) {
    const closed = batcher.add(item);
    if (closed) out.push(closed);
  }
  const last = batcher.take();
  if (last) out.push(last);
  return out;
}

const eventBytes = (b: Batch<Item>, n: number) => Buffer.byteLength(JSON.stringify({ job: 'upload-u-x', batch: n, records: b.items }));

describe('RecordBatcher: how record events are cut', () => {
  it('puts at most 1000 small records in one event', () => {
    const items = Array.from({ length: 2500 }, (_, id) => ({ id, text: 'hr' }));
    const batches = cut(items);
    expect(batches.map((b) => b.items.length)).toEqual([MAX_RECORDS_PER_EVENT, MAX_RECORDS_PER_EVENT, 500]);
    expect(batches.flatMap((b) => b.items)).toEqual(items);
  });

  it('keeps every event at or under 512 KiB of UTF-8 JSON, multi-byte characters counted as bytes', () => {
    // ~2 KiB of JSON text that is ~4 KiB of UTF-8: a character count would overfill the event.
    const items = Array.from({ length: 600 }, (_, id) => ({ id, text: 'é✓'.repeat(700 + (id % 50)) }));
    const batches = cut(items);
    expect(batches.length).toBeGreaterThan(4);
    batches.forEach((b, n) => expect(eventBytes(b, n)).toBeLessThanOrEqual(MAX_EVENT_JSON_BYTES));
    // Filled, not merely small: each closed event could not take its successor's first item.
    for (let n = 0; n + 1 < batches.length; n++) {
      const withNext = { ...batches[n]!, items: [...batches[n]!.items, batches[n + 1]!.items[0]!] };
      expect(eventBytes(withNext, n)).toBeGreaterThan(MAX_EVENT_JSON_BYTES - 64);
    }
    expect(batches.flatMap((b) => b.items)).toEqual(items);
  });

  it('sends a single record larger than the limit alone in its event, never split and never dropped', () => {
    const huge = { id: 1, text: 'x'.repeat(MAX_EVENT_JSON_BYTES + 10) };
    const batches = cut([{ id: 0, text: 'a' }, huge, { id: 2, text: 'b' }]);
    expect(batches.map((b) => b.items.map((i) => i.id))).toEqual([[0], [1], [2]]);
  });

  it('cuts the same items the same way every time, with the same digests, and a different content gets a different digest', () => {
    const items = Array.from({ length: 3000 }, (_, id) => ({ id, text: 'v'.repeat(id % 700) }));
    const a = cut(items);
    const b = cut(items.map((i) => ({ ...i })));
    expect(a.map((x) => [x.items.length, x.digest])).toEqual(b.map((x) => [x.items.length, x.digest]));
    const changed = cut(items.map((i) => (i.id === 5 ? { ...i, text: 'changed' } : i)));
    expect(changed[0]!.digest).not.toBe(a[0]!.digest);
  });
});

describe('RecordBatcher: what a batch holds (issue 38, the bulk ETL threads)', () => {
  it("a batch's JSON is the UTF-8 of its items' JSON array, and it keeps of each item only what the caller asks (a sealed job keeps fingerprints, not records)", () => {
    const batcher = new RecordBatcher<string>(envelopeBytes({ job: 'upload-u-x', records: [] }), { maxBytes: MAX_EVENT_JSON_BYTES, maxItems: 3 });
    const items = Array.from({ length: 5 }, (_, id) => ({ id, text: `é✓ ${'v'.repeat(id * 40_000)}` }));
    const out: Batch<string>[] = [];
    for (const item of items) {
      const closed = batcher.add(item, JSON.stringify(item), `kept-${item.id}`);
      if (closed) out.push(closed);
    }
    out.push(batcher.take()!);
    expect(out.map((b) => b.items)).toEqual([['kept-0', 'kept-1', 'kept-2'], ['kept-3', 'kept-4']]);
    expect(out.map((b) => JSON.parse(b.json.toString('utf8')) as unknown)).toEqual([items.slice(0, 3), items.slice(3)]);
    // The digest is the one the same items cut with their own JSON get: event ids do not change with what is kept.
    const plain = cut(items.slice(0, 3) as unknown as Item[]);
    expect(out[0]!.digest).toBe(plain[0]!.digest);
  });

  it("a one-record batch's buffer is a few KiB, not an event's worth (issue 37: a one-line upload's batchers), and later batches start as large as the last grew", () => {
    const [one] = cut([{ id: 1, text: 'hr' }]);
    expect(one!.json.buffer.byteLength).toBeLessThanOrEqual(4096);
    expect(JSON.parse(one!.json.toString('utf8'))).toEqual([{ id: 1, text: 'hr' }]);
    const full = cut(Array.from({ length: 2000 }, (_, id) => ({ id, text: 'x'.repeat(100) })));
    expect(full).toHaveLength(2);
    // The second batch needed no growing: its buffer is the size the first one reached.
    expect(full[1]!.json.buffer.byteLength).toBe(full[0]!.json.buffer.byteLength);
    expect(JSON.parse(full[1]!.json.toString('utf8'))).toHaveLength(1000);
  });
});
