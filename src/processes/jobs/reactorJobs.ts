import type { EventStore, RecordedEvent } from '../../eventstore/eventStore.js';
import type { Reactor, ReactorDeadLetter } from '../../projector/reactor.js';
import { errorText } from '../../workqueue/jobInput.js';
import type { WorkQueue } from '../../workqueue/workQueue.js';
import { JobCancelled, type JobHandler } from './jobHandler.js';

/** The job kind of a reactor's dead letters. */
export const reactorJobKind = (reactor: string) => `reactor.${reactor}`;

type ReactorJobPayload = { position: number; event_id: string; type: string; stream: string; reactor_error: string };

/**
 * A reactor's handler that failed on an event REACTOR_ATTEMPTS times in a row sets the event aside
 * as a `reactor.<name>` job (keyed by its position, referencing the event, never copying its
 * data; its error as the queue keeps errors, without the values it quotes: jobInput.ts errorText)
 * and the reactor moves on (issue 26). The job is tried once more by the job runner; failing
 * again it is a dead letter, for `npm run cli -- jobs dead-letters` and `jobs replay <id>`.
 */
export function reactorDeadLetters(queue: WorkQueue, kick: () => void): ReactorDeadLetter {
  return async (reactor, event, error) => {
    const payload: ReactorJobPayload = { position: event.globalPosition, event_id: event.id, type: event.type, stream: event.streamName, reactor_error: errorText(error).slice(0, 500) };
    await queue.enqueue({ kind: reactorJobKind(reactor.name), key: String(event.globalPosition), payload, maxAttempts: 1 });
    kick();
  };
}

/** Runs a reactor's set-aside event through its handler again (idempotent, as every reactor handler). */
export function reactorJobHandler(eventStore: EventStore, reactor: Reactor): JobHandler {
  return {
    kind: reactorJobKind(reactor.name),
    concurrency: 1,
    run: async ({ job }) => {
      const { position, event_id: eventId } = job.payload as ReactorJobPayload;
      const [event] = await eventStore.readAll({ after: position - 1, maxCount: 1 });
      // Erased since (a deletion tombstoned its stream): nothing is left to react to.
      if (!event || event.globalPosition !== position || event.id !== eventId) throw new JobCancelled(`event at ${position} is no longer in the log`);
      await reactor.handle(event as RecordedEvent);
    },
  };
}
