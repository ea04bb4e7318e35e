import type { Event, RecordedEvent } from '../eventstore/eventStore.js';
import type { Change, CollectionSpec } from '../readstore/readStore.js';

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
  evolve: (event: RecordedEvent<E>) => readonly Change[];
};

export function defineProjection<E extends Event>(p: Projection<E>): Projection {
  return p as unknown as Projection;
}
