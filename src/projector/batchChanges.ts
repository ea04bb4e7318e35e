import type { RecordedEvent } from '../eventstore/eventStore.js';
import type { Change, PositionedChange, ReadStore } from '../readstore/readStore.js';
import type { Derivation, Projection, Replay } from './projection.js';

/**
 * Runs a projection's derivation for a batch of events whose evolved changes are `changes`: every
 * chunk but the last goes to `applyInterim` at once (to be applied with the checkpoint unmoved),
 * the last is appended to `changes`, for the caller to apply with the batch. Answers false when
 * `stopped` interrupted it. `replay`: a rebuild's (Replay), on every chunk of its replay.
 */
export async function deriveBatch(
  readStore: ReadStore,
  derive: Derivation,
  events: readonly RecordedEvent[],
  changes: PositionedChange[],
  applyInterim: (changes: PositionedChange[]) => Promise<void>,
  stopped: () => boolean = () => false,
  replay?: Replay,
): Promise<boolean> {
  const position = events[events.length - 1]!.globalPosition;
  let index = changes.length;
  let pending: Change[] | null = null;
  for await (const chunk of derive.derive(events, changes, readStore, replay)) {
    if (pending) {
      await applyInterim(tagged(pending, position, index));
      index += pending.length;
    }
    if (stopped()) return false;
    pending = chunk;
  }
  if (pending) changes.push(...tagged(pending, position, index));
  return true;
}

/**
 * The chunk's changes tagged in place with the batch's position and indexes from `index` on. A
 * module-level function, not a callback made per batch: V8 optimised such a callback again after
 * each of the projector's mark-compacts (BENCHMARKS.md, issue 38, h17/compile).
 */
function tagged(chunk: Change[], position: number, index: number): PositionedChange[] {
  const out: PositionedChange[] = [];
  for (const change of chunk) {
    const c = change as PositionedChange;
    c.position = position;
    c.index = index++;
    out.push(c);
  }
  return out;
}

/** Evolves one event (with its sequence number, 0 when it has none) and appends its changes, tagged with its position and index. */
export function pushChanges(p: Projection, e: RecordedEvent, out: PositionedChange[], sequence = 0): void {
  const changes = p.evolve(e, sequence);
  // Evolve makes new change objects on every call: tagging them in place spares a copy of each
  // of a million changes.
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as PositionedChange;
    c.position = e.globalPosition;
    c.index = i;
    out.push(c);
  }
}

/** How much of a buffer an event takes, and at least how many changes it makes: its records, for the batches of ingested records. */
export const weightOf = (e: RecordedEvent): number => {
  const records = (e.data as { records?: unknown }).records;
  return Array.isArray(records) ? Math.max(1, records.length) : 1;
};
