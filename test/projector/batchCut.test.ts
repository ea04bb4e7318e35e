import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { BATCH_EVENTS, HEAVY_EVENT_RECORDS, nextBatchLength } from '../../src/projector/batchCut.js';

let position = 0;
/** A record event of `records` records (what weightOf counts), of `stream`. */
const ingested = (records: number, stream = 'ingest-a'): RecordedEvent =>
  ({
    id: `e${++position}`,
    type: 'samples.ingested',
    data: { records: Array.from({ length: records }, () => ({})) },
    metadata: {},
    streamName: stream,
    streamRevision: 0,
    globalPosition: position,
    createdAt: new Date(0),
  }) as RecordedEvent;

const heavy = () => ingested(1000, 'ingest-bulk');
const light = () => ingested(1, 'ingest-one-line');

describe('the projector batch cut (batchCut.ts)', () => {
  it("a light event is not held back by heavy events queued behind it: the batch ends before them", () => {
    expect(nextBatchLength([light(), heavy(), heavy()], 10_000)).toBe(1);
    expect(nextBatchLength([heavy(), light(), heavy(), heavy()], 10_000)).toBe(2);
    expect(nextBatchLength([light(), light(), heavy()], 10_000)).toBe(2);
  });

  it('heavy events batch together, and light events after them join (they waited for them anyway)', () => {
    expect(nextBatchLength([heavy(), heavy(), heavy(), light(), light()], 10_000)).toBe(5);
  });

  it('light events batch together up to the event limit', () => {
    expect(nextBatchLength(Array.from({ length: BATCH_EVENTS + 5 }, light), 1_000_000)).toBe(BATCH_EVENTS);
  });

  it('a batch ends once it weighs maxChanges records, and takes at least one event', () => {
    expect(nextBatchLength([heavy(), heavy(), heavy()], 2_000)).toBe(2);
    expect(nextBatchLength([heavy(), heavy()], 10)).toBe(1);
    expect(nextBatchLength([ingested(HEAVY_EVENT_RECORDS - 1), ingested(HEAVY_EVENT_RECORDS)], 10_000)).toBe(1);
  });

  it('a barrier goes alone, and ends the batch before it', () => {
    const barrier = light();
    const isBarrier = (e: RecordedEvent) => e === barrier;
    expect(nextBatchLength([barrier, light()], 10_000, isBarrier)).toBe(1);
    expect(nextBatchLength([light(), light(), barrier], 10_000, isBarrier)).toBe(2);
  });
});
