import type { RecordedEvent } from '../eventstore/eventStore.js';
import { weightOf } from './batchChanges.js';

/** Events per batch, at most. */
export const BATCH_EVENTS = 1000;

/**
 * An event of this many records or more is heavy: a bulk import's (a thousand records an event),
 * never a one-line upload's. Such an event costs its batch tens to hundreds of milliseconds.
 */
export const HEAVY_EVENT_RECORDS = 100;

/**
 * How many of the buffered events the next batch takes: one alone when the first is a barrier,
 * else up to BATCH_EVENTS, while the batch weighs under `maxChanges` (every record makes at
 * least one change) and up to the next barrier. And a heavy event never joins a batch that holds
 * a light one: whoever sent the light event (another tenant's one-line upload, most often) sees
 * it when the batch commits, and would otherwise wait for every heavy event queued behind it
 * (BENCHMARKS.md, issue 38, h20/fair). A heavy event may still be followed by light ones in its
 * batch: those were waiting for it anyway.
 */
export function nextBatchLength(buffer: readonly RecordedEvent[], maxChanges: number, isBarrier: (e: RecordedEvent) => boolean = () => false): number {
  if (!buffer.length) return 0;
  if (isBarrier(buffer[0]!)) return 1;
  let weight = 0;
  let light = false;
  let n = 0;
  while (n < buffer.length && n < BATCH_EVENTS && weight < maxChanges) {
    const e = buffer[n]!;
    if (isBarrier(e)) break;
    const w = weightOf(e);
    if (w >= HEAVY_EVENT_RECORDS && light) break;
    if (w < HEAVY_EVENT_RECORDS) light = true;
    weight += w;
    n++;
  }
  return n;
}
