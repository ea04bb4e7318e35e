import type { EventStore } from '../eventstore/eventStore.js';
import { CheckpointMismatchError, type Change, type PositionedChange, type ReadStore } from '../readstore/readStore.js';
import { pushChanges } from './batchChanges.js';
import { DEAD_LETTERS, resolvedChange, type DeadLetterDoc } from './deadLetters.js';
import { EventSequencer } from './eventSequences.js';
import type { Projection } from './projection.js';

export type ReplayOutcome = {
  id: string;
  projection: string;
  /** `replayed`: applied now; `gone`: its event is no longer in the log (erased), nothing to apply. */
  status: 'replayed' | 'gone';
  /** The projection's checkpoint the event was applied at (it does not move). */
  checkpoint: number;
};

export class DeadLetterError extends Error {
  override name = 'DeadLetterError';
}

/**
 * Tags of a replay's changes: at the checkpoint, after every index a live batch uses there, so
 * that the MongoDB store's replay guard treats them as the newest writes (mongoReadStore.ts).
 */
const REPLAY_INDEX_BASE = 2 ** 40;
/** A live runner may commit between the read of the checkpoint and the replay's batch: try again. */
const ATTEMPTS = 5;

/**
 * Applies a dead-lettered event again, now: evolve (with the sequence number the event was given,
 * or a new one) and the projection's derivation, in one batch at the projection's current
 * checkpoint, which does not move; the dead letter is closed as `replayed` in the same batch.
 * The event is applied as of now, after the events that followed it in the log: a record a later
 * event also sent is overwritten with this event's version. `projections rebuild <projection>`
 * applies every dead-lettered event in its place in the log instead (docs/architecture.md).
 * A replay that fails again changes nothing and leaves the dead letter open.
 */
export async function replayDeadLetter(eventStore: EventStore, readStore: ReadStore, projections: readonly Projection[], id: string): Promise<ReplayOutcome> {
  const letter = await readStore.get<DeadLetterDoc>(DEAD_LETTERS, id);
  if (!letter) throw new DeadLetterError(`no dead letter ${id} (see: projections dead-letters)`);
  if (letter.status !== 'open') throw new DeadLetterError(`dead letter ${id} is ${letter.status} already`);
  const p = projections.find((x) => x.name === letter.projection);
  if (!p) throw new DeadLetterError(`dead letter ${id} names projection ${letter.projection}, which this version does not have`);

  const [event] = await eventStore.readAll({ after: letter.position - 1, maxCount: 1, filter: { eventTypes: [letter.event_type] } });
  const checkpointNow = async () => {
    const cp = await readStore.getCheckpoint(p.name);
    if (cp?.status !== 'live') throw new DeadLetterError(`projection ${p.name} is being rebuilt; the rebuild applies its dead letters in their place`);
    return cp.position;
  };
  if (!event || event.globalPosition !== letter.position || event.id !== letter.event_id) {
    await readStore.applyChanges([resolvedChange(letter, 'gone', new Date(), letter.position)]);
    return { id, projection: p.name, status: 'gone', checkpoint: await checkpointNow() };
  }

  for (let attempt = 1; ; attempt++) {
    const at = await checkpointNow();
    let index = REPLAY_INDEX_BASE;
    const tag = (chunk: readonly Change[]): PositionedChange[] => chunk.map((c) => Object.assign(c, { position: at, index: index++ }) as PositionedChange);
    const batch = { projection: p.name, expectedPosition: at, position: at, mode: 'live' as const, lastEventAt: null };
    try {
      const numbered = await new EventSequencer(readStore, p).number([event]);
      const evolved: PositionedChange[] = [];
      pushChanges(p, event, evolved, numbered.of(event));
      const changes = tag([...numbered.through(event.globalPosition), ...evolved]);
      if (p.derive) {
        let pending: Change[] | null = null;
        for await (const chunk of p.derive.derive([event], changes, readStore)) {
          if (pending) await readStore.applyBatch({ ...batch, changes: tag(pending) });
          pending = chunk;
        }
        if (pending) changes.push(...tag(pending));
      }
      // Last: on MongoDB, written after everything it vouches for.
      changes.push(...tag([resolvedChange(letter, 'replayed', new Date(), at)]));
      await readStore.applyBatch({ ...batch, changes });
      return { id, projection: p.name, status: 'replayed', checkpoint: at };
    } catch (err) {
      if (!(err instanceof CheckpointMismatchError) || attempt >= ATTEMPTS) throw err;
    }
  }
}
