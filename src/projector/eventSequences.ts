import type { RecordedEvent } from '../eventstore/eventStore.js';
import type { CollectionSpec, Doc, PositionedChange, ReadStore } from '../readstore/readStore.js';
import type { Projection } from './projection.js';

/**
 * Dense per-projection numbers for the events whose records take integer ids (issue 20; record
 * ids in projections/records/recordIds.ts). An event's number is assigned once, in log order,
 * the first time its projection applies it, and written in the same batch (the same transaction
 * on the embedded store) as the rows that use it. Every later application of the event (a replay
 * after a crash, a rebuild, the replay of a dead letter) reads it back, so a rebuild reproduces
 * every id, even after an erasure removed other events from the log (which renumbering would not
 * survive). The numbers live beside the read models in a collection of the runtime's that no
 * projection owns, so a rebuild keeps them.
 *
 * On MongoDB a batch is not atomic: its numbers are written before its rows (they come first in
 * the batch), in log order, so a crash leaves a prefix of them stored; the replay reads that
 * prefix back and numbers the rest from the highest stored number on, exactly as the first try
 * did. A number is unique per projection (a unique index): two writers numbering at once (a live
 * runner and an operator's replay) cannot both store one, and the loser's batch fails and is retried.
 */
export const EVENT_SEQUENCES = 'projection_event_sequences';

export const eventSequencesCollection: CollectionSpec = {
  name: EVENT_SEQUENCES,
  indexes: [{ fields: [['projection', 1], ['seq', 1]], unique: true }],
  columns: ['position'],
  // Not rebuildable from events: a later shape that only adds columns or indexes keeps the rows.
  extendInPlace: true,
};

type SequenceDoc = Doc & { projection: string; position: number; seq: number };

const sequenceId = (projection: string, position: number) => `${projection}:${position}`;
/**
 * Stored (as number 0 at position 0) once a projection's ids come from its sequence: read models
 * without it hold the ids of an earlier version (log position × 10⁴) and are rebuilt at start-up.
 */
const MARKER = 0;

/** The marker's change (ProjectorRuntime.init, rebuilds). */
export const sequenceMarker = (projection: string): PositionedChange => ({
  op: 'put',
  collection: EVENT_SEQUENCES,
  doc: { _id: sequenceId(projection, MARKER), projection, position: MARKER, seq: MARKER },
  position: 0,
  index: 0,
});

export async function hasSequenceMarker(readStore: ReadStore, projection: string): Promise<boolean> {
  return (await readStore.get(EVENT_SEQUENCES, sequenceId(projection, MARKER))) !== null;
}

export type Numbered = {
  /** The event's number; 0 for events the projection does not number. */
  of: (e: RecordedEvent) => number;
  /**
   * The writes of the numbers assigned to the events up to `position` (the ones in the batch),
   * in log order; numbers assigned to later events are handed out again next time.
   */
  through: (position: number) => PositionedChange[];
};

export class EventSequencer {
  /** The next number to assign; null: read it from the store before assigning. */
  private next: number | null = null;

  /**
   * `lookups`: where the numbers of events numbered before are read (default `readStore`). A
   * rebuild's replay reads them through its own connection, not the replay's (rebuild.ts): that
   * one answers only behind the write of the chunk before, and the numbers a replay assigns are
   * for events after that chunk's, never looked up again by a later chunk, so a connection that
   * sees only committed rows answers the same. The highest number is read from `readStore`.
   */
  constructor(
    private readonly readStore: ReadStore,
    private readonly p: Projection,
    private readonly lookups: ReadStore = readStore,
  ) {}

  /** Forgets the count (after a failed batch, or when another writer may have numbered events). */
  reset(): void {
    this.next = null;
  }

  /** Numbers the events a batch may take, reading back those numbered before. */
  async number(events: readonly RecordedEvent[]): Promise<Numbered> {
    const sequenced = this.p.sequenced;
    const mine = sequenced ? events.filter((e) => sequenced(e)) : [];
    const numbers = new Map<number, number>();
    if (!mine.length) return { of: () => 0, through: () => [] };
    for (let i = 0; i < mine.length; i += 500) {
      const ids = mine.slice(i, i + 500).map((e) => sequenceId(this.p.name, e.globalPosition));
      for (const d of await this.lookups.find<SequenceDoc>(EVENT_SEQUENCES, { filter: { _id: { $in: ids } }, fields: ['position', 'seq'] })) numbers.set(d.position, d.seq);
    }
    this.next ??= (await this.highest()) + 1;
    const assigned: PositionedChange[] = [];
    for (const e of mine) {
      if (numbers.has(e.globalPosition)) continue;
      const seq = this.next++;
      numbers.set(e.globalPosition, seq);
      assigned.push({ op: 'put', collection: EVENT_SEQUENCES, doc: { _id: sequenceId(this.p.name, e.globalPosition), projection: this.p.name, position: e.globalPosition, seq }, position: e.globalPosition, index: 0 });
    }
    return {
      of: (e) => numbers.get(e.globalPosition) ?? 0,
      through: (position) => {
        const kept = assigned.filter((c) => c.position <= position);
        const dropped = assigned.length - kept.length;
        if (dropped && this.next !== null) this.next -= dropped;
        return kept;
      },
    };
  }

  private async highest(): Promise<number> {
    const [top] = await this.readStore.find<SequenceDoc>(EVENT_SEQUENCES, { filter: { projection: this.p.name }, sort: [['seq', -1]], limit: 1, fields: ['seq'] });
    return top?.seq ?? 0;
  }
}
