import { StreamDeletedError, type Event, type EventStore, type RecordedEvent } from '../../src/eventstore/eventStore.js';
import { deterministicId } from '../../src/shared/ids.js';

/**
 * Snapshots of aggregates whose streams still grow (issue 26: a user whose tokens were minted on
 * the user stream before the token stream existed holds 100,000 events there, folded before
 * every upload, ETL batch and pull). A snapshot is an event on `snapshot-<stream>` holding the
 * state folded up to a revision of the stream; `loadState` (commandHandler.ts) reads the latest
 * one and folds only the events after it. A snapshot is taken by the reader that folded
 * `every` events past the last one, appended with an id derived from the stream, version and
 * revision (two readers taking the same one write it once); failing to write one costs the next
 * reader the same fold, nothing more.
 *
 * The snapshot stands only while the stream still holds the event it was taken at: a stream
 * erased (tombstoned) folds to the initial state as before, and a stream that no longer has that
 * revision is folded whole. Personal fields of a snapshot are sealed under the user's profile key
 * like those of the events they repeat (commands/shared/personalFields.ts), and the snapshot
 * stream is erased with the stream it follows.
 */
export type Snapshots<State> = {
  /** The snapshot event's type (`snapshot.user`). */
  type: string;
  /** Raised whenever the state's shape or its evolve changes: snapshots of another version are ignored. */
  version: number;
  /** The state as top-level event data (user_id and tenant_id in the clear, for sealing), or null: not worth one yet. */
  encode: (state: State, streamName: string) => Record<string, unknown> | null;
  decode: (data: Record<string, unknown>) => State;
  /** Events folded past the last snapshot before a new one is taken. */
  every: number;
};

export const snapshotStream = (streamName: string) => `snapshot-${streamName}`;

type SnapshotData = Record<string, unknown> & { snapshot_version: number; revision: number };

/** The latest snapshot of the stream of this version: its state and the revision it folded up to, or null. */
export async function latestSnapshot<State>(eventStore: EventStore, streamName: string, spec: Snapshots<State>): Promise<{ state: State; revision: number } | null> {
  let last: RecordedEvent[];
  try {
    last = await eventStore.readStream(snapshotStream(streamName), { direction: 'backwards', maxCount: 1 });
  } catch (err) {
    if (err instanceof StreamDeletedError) return null;
    throw err;
  }
  const e = last[0];
  if (!e || e.type !== spec.type) return null;
  const data = e.data as SnapshotData;
  if (data.snapshot_version !== spec.version || !Number.isInteger(data.revision)) return null;
  return { state: spec.decode(data), revision: data.revision };
}

/** Appends a snapshot of `state` as folded up to `revision` (best effort: the caller goes on without). */
export async function takeSnapshot<State>(eventStore: EventStore, streamName: string, spec: Snapshots<State>, state: State, revision: number): Promise<void> {
  const encoded = spec.encode(state, streamName);
  if (!encoded) return;
  const event: Event = {
    type: spec.type,
    data: { ...encoded, snapshot_version: spec.version, revision },
    id: deterministicId(streamName, 'snapshot', String(spec.version), String(revision)),
  } as Event;
  try {
    await eventStore.appendToStream(snapshotStream(streamName), [event], { expectedRevision: 'any' });
  } catch {
    // A stream being erased (its snapshot stream tombstoned), a busy store: the next reader folds the same and tries again.
  }
}
