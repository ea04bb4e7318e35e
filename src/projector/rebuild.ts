import type { EventStore, RecordedEvent } from '../eventstore/eventStore.js';
import { CheckpointMismatchError, type PositionedChange, type ReadStore } from '../readstore/readStore.js';
import { LeaseLostError } from '../readstore/leases.js';
import { deriveBatch, pushChanges, weightOf } from './batchChanges.js';
import { DEAD_LETTERS, deadLetterChange, deadLetterId, errorText, resolvedChange, type DeadLetterDoc } from './deadLetters.js';
import { EventSequencer, sequenceMarker } from './eventSequences.js';
import type { Projection, Replay } from './projection.js';
import { DEFAULT_RETRY, isErasureEvent, type RetryPolicy } from './runner.js';
import { backoffDelay, DEFAULT_BACKOFF, transientKind, type Backoff } from '../shared/transientErrors.js';

export type RebuildProgress = { projection: string; position: number; head: number; events: number; elapsedMs: number };

/** Changes per transaction of a rebuild: record events hold up to a thousand records each. */
const REBUILD_CHANGES = 20_000;

const yieldTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The write of the chunk before failed and was redone event by event: this chunk, prepared on what it read after that failure, is read again from the log. */
class ChunkVoid extends Error {
  constructor() {
    super('the chunk before failed');
  }
}

/** Evolve threw: the event's own fault, the same on every attempt. */
class EvolveFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('evolve failed');
  }
}

/**
 * Drops a projection's collections and replays every event of its types from the start through
 * the same evolve the live runner uses, with the sequence numbers the events were given (kept
 * outside the projection's collections, eventSequences.ts), so the result equals the live state
 * and every record keeps its id. Then derives everything once.
 *
 * Dead letters (deadLetters.ts): an event that fails here as it failed live is dead-lettered again
 * and skipped, so the rebuild still equals the live state; one that now applies (the code was
 * fixed) is applied in its place in the log and its dead letter closed as `applied_by_rebuild`.
 * A chunk that fails is narrowed to its events one by one, each tried as often as the live
 * runner tries a batch. As live (contracts §19), a store failing for a while is retried with a
 * capped back-off for as long as it takes, and an erasure event is never dead-lettered: the
 * rebuild stops on it with the reason, the projection left `rebuilding` until it is run again.
 *
 * `replayStore` (the embedded store: a connection on a thread of its own whose calls run in the
 * order they are made, threadedSqliteReadStore.ts): every read and write of the replay goes
 * through it, and a chunk's write is not waited for: this thread reads, opens and evolves the
 * next chunk meanwhile, and that chunk's reads (its derivation's) queue behind the write. A
 * failed write is learned one chunk late, before the next chunk's write is asked for; its events
 * are then applied one by one as above, and the chunk prepared meanwhile (on reads that may have
 * seen the failure) is read again from the log. `readStore` then serves only the sequence numbers of
 * events numbered before (eventSequences.ts). What is committed is still a prefix of the replay
 * with its checkpoint: a chunk's rows and the checkpoint move in one write.
 */
export async function rebuildOne(
  p: Projection,
  eventStore: EventStore,
  readStore: ReadStore,
  onProgress?: (p: RebuildProgress) => void,
  retry: RetryPolicy = DEFAULT_RETRY,
  stallBackoff: Backoff = DEFAULT_BACKOFF,
  replayStore?: ReadStore,
): Promise<RebuildProgress> {
  const started = Date.now();
  // Every read and write of the replay; `readStore` only for the sequence numbers (above).
  const store = replayStore ?? readStore;
  // Marking the checkpoint first makes live runners elsewhere stop writing before the drop.
  await store.setCheckpoint(p.name, 0, 'rebuilding');
  await store.dropCollections(p.collections.map((c) => c.name));
  // A derivation that folds evolve's changes (Derivation.folds) runs on every chunk of the replay,
  // as live, and reads through the indexes. Otherwise secondary indexes are built once at the
  // end: cheaper than maintaining them row by row.
  const folding = p.derive?.folds !== undefined ? p.derive : null;
  await store.ensureCollections(p.collections, { indexes: folding !== null });
  // This replay's own: the collections are empty from here and only it writes them (Replay).
  const replay: Replay = { projection: p.name };
  // Whatever ids the dropped rows had, the rebuilt ones come from the sequence.
  if (p.sequenced) await store.applyChanges([sequenceMarker(p.name)]);
  const sequencer = new EventSequencer(store, p, readStore);
  const head = await eventStore.headPosition();
  let position = 0;
  let events = 0;
  const filter = { eventTypes: p.eventTypes };
  /** The last chunk's write, asked for and not waited for (replayStore), with what to redo if it failed. */
  let inFlight: { written: Promise<void>; events: readonly RecordedEvent[]; from: number } | null = null;

  /**
   * Waits for the write in flight. One that failed is redone event by event from where it began
   * (applyAlone); answers true then: whatever was prepared since read a state without it.
   */
  const drain = async (): Promise<boolean> => {
    const chunk = inFlight;
    if (!chunk) return false;
    inFlight = null;
    try {
      await chunk.written;
      return false;
    } catch (err) {
      sequencer.reset();
      if (err instanceof CheckpointMismatchError || err instanceof LeaseLostError) throw err;
      position = chunk.from;
      for (const e of chunk.events) await applyAlone(e);
      return true;
    }
  };

  /**
   * Applies the first events of `candidates` as one batch from `position`, as many as make about
   * REBUILD_CHANGES changes (at least one): their changes, their new sequence numbers and the
   * dead letters they close. Answers how many it applied.
   */
  const apply = async (candidates: readonly RecordedEvent[], pipelined = false): Promise<number> => {
    const numbered = await sequencer.number(candidates);
    const evolved: PositionedChange[] = [];
    let n = 0;
    while (n < candidates.length && (n === 0 || evolved.length < REBUILD_CHANGES)) {
      const e = candidates[n++]!;
      try {
        pushChanges(p, e, evolved, numbered.of(e));
      } catch (err) {
        throw new EvolveFailed(err);
      }
    }
    const last = candidates[n - 1]!;
    const changes: PositionedChange[] = [...numbered.through(last.globalPosition), ...evolved];
    if (folding) {
      const interim = async (c: PositionedChange[]) => {
        if (await drain()) throw new ChunkVoid();
        await store.applyBatch({ projection: p.name, expectedPosition: position, position, mode: 'rebuilding', lastEventAt: null, changes: c, deferCommit: true });
      };
      await deriveBatch(store, folding, candidates.slice(0, n), changes, interim, undefined, replay);
    }
    const ids = candidates.slice(0, n).map((e) => deadLetterId(p.name, e.globalPosition));
    const now = new Date();
    for (const letter of await store.find<DeadLetterDoc>(DEAD_LETTERS, { filter: { _id: { $in: ids }, status: 'open' } })) {
      changes.push(resolvedChange(letter, 'applied_by_rebuild', now, letter.position));
    }
    const erasing = candidates.slice(0, n).some(isErasureEvent);
    // The chunk before is written, or redone and this one void: its reads (above) were answered
    // only after that write, on the same connection, and may have seen it fail.
    if (await drain()) throw new ChunkVoid();
    const written = store.applyBatch({ projection: p.name, expectedPosition: position, position: last.globalPosition, mode: 'rebuilding', lastEventAt: last.createdAt.toISOString(), changes, erasing, deferCommit: true });
    if (!pipelined || !replayStore) {
      await written;
      position = last.globalPosition;
      return n;
    }
    // Its failure is learned by the next drain; until then it must not count as unhandled.
    written.catch(() => {});
    inFlight = { written, events: candidates.slice(0, n), from: position };
    position = last.globalPosition;
    return n;
  };

  /**
   * One event, tried as often as the live runner tries one, then dead-lettered; at once when its
   * evolve throws (a pure function fails the same way every time; a rebuild meets every event
   * that is still dead-lettered).
   */
  const applyAlone = async (e: RecordedEvent): Promise<void> => {
    for (let attempt = 1, stalls = 0; ; attempt++) {
      try {
        await apply([e]);
        return;
      } catch (thrown) {
        sequencer.reset();
        if (thrown instanceof CheckpointMismatchError || thrown instanceof LeaseLostError) throw thrown;
        const err = thrown instanceof EvolveFailed ? thrown.cause : thrown;
        if (!(thrown instanceof EvolveFailed) && transientKind(err)) {
          // Not the event's fault: not an attempt; tried again once the store answers.
          attempt--;
          await new Promise((resolve) => setTimeout(resolve, backoffDelay(++stalls, stallBackoff)));
          continue;
        }
        if ((thrown instanceof EvolveFailed || attempt > retry.delaysMs.length) && isErasureEvent(e)) {
          throw new Error(`the rebuild of ${p.name} stopped on ${e.type} at ${e.globalPosition}, which failed on every attempt (${errorText(err)}): an erasure event is never dead-lettered; fix the projection and run the rebuild again`);
        }
        if (thrown instanceof EvolveFailed || attempt > retry.delaysMs.length) {
          const change = deadLetterChange(p.name, e, err, attempt, new Date());
          await store.applyBatch({ projection: p.name, expectedPosition: position, position: e.globalPosition, mode: 'rebuilding', lastEventAt: e.createdAt.toISOString(), changes: [change] });
          position = e.globalPosition;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, retry.delaysMs[attempt - 1]));
      }
    }
  };

  // Record events hold up to a thousand records: read fewer of them at a time, so that a read
  // and its transaction stay near REBUILD_CHANGES changes whatever the projection.
  let readCount = 1000;
  for (;;) {
    // A catch-up read: the live runner goes on from the last event read (KurrentDB may answer from a secondary index).
    const batch = await eventStore.readAll({ after: position, maxCount: readCount, filter, consistency: 'catch-up' });
    // The last chunk's write failed and was redone: read on from where that left the replay.
    if (batch.length === 0 && !(await drain())) break;
    for (let from = 0; from < batch.length; ) {
      // Every record makes at least one change: events past this weight cannot join the chunk.
      let to = from;
      // A folding derivation, as live, takes a barrier event alone and stops a chunk before one.
      if (folding?.isBarrier(batch[from]!)) to++;
      else for (let weight = 0; to < batch.length && to - from < 1000 && weight < REBUILD_CHANGES && !folding?.isBarrier(batch[to]!); ) weight += weightOf(batch[to++]!);
      const candidates = batch.slice(from, to);
      let applied: number;
      try {
        applied = await apply(candidates, true);
      } catch (err) {
        sequencer.reset();
        // The chunk before failed (and was redone): this one, whatever it met, is read again from the log.
        if (err instanceof ChunkVoid || (await drain())) break;
        if (err instanceof CheckpointMismatchError || err instanceof LeaseLostError) throw err;
        for (const e of candidates) await applyAlone(e);
        applied = candidates.length;
      }
      events += applied;
      from += applied;
      onProgress?.({ projection: p.name, position, head: Math.max(head, position), events, elapsedMs: Date.now() - started });
      // The embedded store is synchronous underneath: yield so timers and signals get a turn.
      await yieldTurn();
    }
    // An empty read (the last write failed and was redone) keeps the count.
    if (batch.length === 0) continue;
    const perEvent = batch.reduce((n, e) => n + weightOf(e), 0) / batch.length;
    readCount = Math.max(16, Math.min(1000, Math.floor((2 * REBUILD_CHANGES) / perEvent)));
  }
  await store.ensureCollections(p.collections);
  // A folding derivation kept the derived state through the replay.
  if (p.derive && !folding) {
    for await (const chunk of p.derive.rebuildAll(store)) {
      let index = 0;
      const changes = chunk.map((c) => Object.assign(c, { position, index: index++ }) as PositionedChange);
      await store.applyBatch({ projection: p.name, expectedPosition: position, position, mode: 'rebuilding', lastEventAt: null, changes });
      await yieldTurn();
    }
  }
  // Events appended during the rebuild are picked up by the live runner from here.
  await store.setCheckpoint(p.name, position, 'live');
  const done = { projection: p.name, position, head: Math.max(head, position), events, elapsedMs: Date.now() - started };
  onProgress?.(done);
  return done;
}
