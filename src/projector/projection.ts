import type { Event, RecordedEvent } from '../eventstore/eventStore.js';
import type { Change, CollectionSpec, PositionedChange, ReadStore } from '../readstore/readStore.js';

/**
 * A projection is declared, not wired: its name, the collections it owns (and may drop on a
 * rebuild), the event types it reads, and a pure `evolve` from one event to read-model changes.
 * Evolve must not read anything: the same events always give the same changes, which is what
 * makes a rebuild equal to the live state.
 */
export type Projection<E extends Event = Event> = {
  name: string;
  collections: readonly CollectionSpec[];
  eventTypes: readonly E['type'][];
  /**
   * `sequence` is the event's number in the projection's dense sequence when `sequenced` says it
   * has one (0 otherwise): 1, 2, 3… in log order, assigned once and remembered by the runtime, so
   * that a replay and a rebuild hand evolve the same number (src/projector/eventSequences.ts).
   */
  evolve: (event: RecordedEvent<E>, sequence: number) => readonly Change[];
  /**
   * Events whose records take integer ids (projections/records/recordIds.ts): ids come from the
   * event's sequence number, not its log position, whose magnitude depends on the backend
   * (EventStoreDB positions are byte offsets).
   */
  sequenced?: (event: RecordedEvent<E>) => boolean;
  /** State that depends on other records than the event's own (the merged view, rollups). */
  derive?: Derivation;
  /** Collections an earlier version of the projection wrote and this one does not: dropped on start. */
  retired?: readonly string[];
};

/**
 * Read models that no single event determines: whether the merged view lists a record depends on
 * its neighbours from other sources, a statistics rollup on every sample of its day. Like a
 * command handler, a derivation loads the state it needs (the neighbourhood of what a batch
 * touches, as stored before the batch), decides with pure functions, and answers changes that go
 * into the same transaction as the batch's evolved changes, so the derived state can never lag
 * or run ahead of the rows it derives from.
 */
export type Derivation = {
  /**
   * Events that re-evaluate a whole user (a new source order, an erased provider): applied in a
   * batch of their own, after everything before them is committed, so `derive` reads the rows
   * as they stand.
   */
  isBarrier: (event: RecordedEvent) => boolean;
  /**
   * The changes the batch implies beyond `evolved`, read from the state before the batch. It may
   * add fields to the batch's own upserts in `evolved` (a new record's merged flag) rather than
   * write those rows twice. Yields chunks: every chunk but the last is applied on its own with
   * the checkpoint unmoved (a whole-user re-evaluation is too large for one transaction; redone
   * whole after a crash), the last one with the batch.
   */
  derive: (events: readonly RecordedEvent[], evolved: PositionedChange[], readStore: ReadStore, replay?: Replay) => AsyncIterable<Change[]>;
  /** After a rebuild replayed every event through evolve: the derived state of all the rows, in chunks. */
  rebuildAll: (readStore: ReadStore) => AsyncIterable<Change[]>;
  /**
   * A collection that is never stored: evolve's changes to it are what the batch says (a record
   * upserted), and `derive` takes them out of `evolved` and writes what they mean to the state it
   * reads (samples packed into blocks, docs/sample-blocks.md). Evolve stays pure; the stored
   * state is a function of the events in log order, whatever the batches, because `derive` runs
   * wherever evolve's changes are applied: live, on a dead letter's replay, and on every chunk of
   * a rebuild's replay (rebuild.ts), which then needs no `rebuildAll`.
   */
  folds?: string;
};

/**
 * Given to `derive` on every chunk of a rebuild's replay (rebuild.ts), the same object for the
 * whole replay and a new one for every rebuild: the projection's collections were dropped when it
 * began, and only this replay writes them while it lasts (live runners pause on the `rebuilding`
 * checkpoint). A derivation may therefore remember what the replay wrote and skip reading what it
 * never wrote (blockSession.ts: the locators of records never seen before, all but the re-sent).
 * A crash ends the replay, and the next rebuild starts over from the drop with a new object.
 */
export type Replay = { readonly projection: string };

export function defineProjection<E extends Event>(p: Projection<E>): Projection {
  return p as unknown as Projection;
}
