import { ConcurrencyError, StreamDeletedError, type Event, type EventStore, type RecordedEvent } from '../../src/eventstore/eventStore.js';
import { DomainError } from './domainError.js';
import { latestSnapshot, takeSnapshot, type Snapshots } from './streamSnapshots.js';

/** Folds a stream's events into the state a decision needs (Emmett's evolve/initialState pair). */
export type StreamState<State, E extends Event> = {
  initialState: () => State;
  evolve: (state: State, event: RecordedEvent<E>) => State;
  /** Aggregates whose streams grow on hot paths are read from a snapshot (streamSnapshots.ts). */
  snapshots?: Snapshots<State>;
};

export type CommandResult<State, E extends Event> = {
  state: State;
  newEvents: E[];
  /** Global position of the last appended event (0 when the decision produced none). */
  position: number;
};

/**
 * Load → decide → append with optimistic concurrency. `decide` is pure: state in, events out
 * (or a thrown DomainError). A concurrent writer makes the append fail and the whole cycle
 * re-runs on the fresh state; a decision is never appended against a state it did not see.
 */
export async function handleCommand<State, E extends Event>(
  eventStore: EventStore,
  streamName: string,
  stream: StreamState<State, E>,
  decide: (state: State, exists: boolean) => E | E[],
  options: { retries?: number } = {},
): Promise<CommandResult<State, E>> {
  const retries = options.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    const { state, revision } = await loadState(eventStore, streamName, stream);
    const decided = decide(state, revision !== null);
    const newEvents = Array.isArray(decided) ? decided : [decided];
    if (newEvents.length === 0) return { state, newEvents, position: 0 };
    try {
      const result = await eventStore.appendToStream(streamName, newEvents, { expectedRevision: revision ?? 'no_stream' });
      let next = state;
      for (const e of newEvents) next = stream.evolve(next, e as unknown as RecordedEvent<E>);
      return { state: next, newEvents, position: result.lastPosition };
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < retries) {
        await contentionPause(attempt);
        continue;
      }
      if (err instanceof StreamDeletedError) throw new DomainError('gone', 'this resource was erased');
      throw err;
    }
  }
}

/**
 * The pause before another attempt after losing a race for a stream: random, up to a bound that
 * doubles with each attempt (1, 2, 4 … 32 ms). Writers that read the same revision in one turn
 * have their appends committed in one group (the embedded store's group commit, or one batch of
 * a busy server), where only one of them can win; retried at once, the losers read again
 * together and meet again in the next group, so with k of them the last needs k attempts. Spread
 * over time they stop meeting, and a hot stream (a user's uploads arriving together) is written
 * within a bounded number of attempts.
 */
export function contentionPause(attempt: number): Promise<void> {
  const bound = 2 ** Math.min(attempt, 5);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * bound));
}

/**
 * A stream erased for good (tombstoned: a deleted user's, an erased upload's) folds to the
 * initial state, as if it never existed; appending to it is refused (handleCommand: `gone`).
 */
export async function loadState<State, E extends Event>(
  eventStore: EventStore,
  streamName: string,
  stream: StreamState<State, E>,
): Promise<{ state: State; revision: number | null }> {
  const snapshot = stream.snapshots ? await latestSnapshot(eventStore, streamName, stream.snapshots) : null;
  let events: RecordedEvent<E>[];
  try {
    // From the snapshot's own revision: the event it was taken at must still be there for it to stand.
    events = (await eventStore.readStream(streamName, snapshot ? { fromRevision: snapshot.revision } : {})) as RecordedEvent<E>[];
  } catch (err) {
    if (err instanceof StreamDeletedError) return { state: stream.initialState(), revision: null };
    throw err;
  }
  if (snapshot && events[0]?.streamRevision !== snapshot.revision) return loadState(eventStore, streamName, { ...stream, snapshots: undefined });
  let state = snapshot ? snapshot.state : stream.initialState();
  const folded = snapshot ? events.slice(1) : events;
  for (const e of folded) state = stream.evolve(state, e);
  const revision = events.length ? events[events.length - 1]!.streamRevision : null;
  if (stream.snapshots && revision !== null && folded.length >= stream.snapshots.every) await takeSnapshot(eventStore, streamName, stream.snapshots, state, revision);
  return { state, revision };
}
