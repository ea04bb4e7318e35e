import type { EventStore } from '../../src/eventstore/eventStore.js';
import { ConcurrencyError } from '../../src/eventstore/eventStore.js';
import { loadState } from '../shared/commandHandler.js';
import { uploadState, type UploadEvent, type UploadState } from './upload.js';

/**
 * A job may start when it is pending and due, or when it runs under an expired lease (its
 * worker died). The claim is an append at the revision the worker saw, so of two workers that
 * race for a job exactly one wins.
 */
export function decideStartEtlJob(state: UploadState, now: Date, worker: string, leaseMs: number, takeOverRunning = false): UploadEvent[] {
  if (!state.accepted) return [];
  const due = state.status === 'pending' && (!state.nextAttemptAt || Date.parse(state.nextAttemptAt) <= now.getTime());
  const orphaned = state.status === 'running' && (takeOverRunning || !state.leaseUntil || Date.parse(state.leaseUntil) <= now.getTime());
  if (!due && !orphaned) return [];
  return [
    {
      type: 'etl.job_started',
      data: {
        user_id: state.accepted.user_id,
        tenant_id: state.accepted.tenant_id,
        attempt: state.attempts + 1,
        worker,
        started_at: now.toISOString(),
        lease_until: new Date(now.getTime() + leaseMs).toISOString(),
      },
    },
  ];
}

export type ClaimedJob = { stream: string; state: UploadState; revision: number };

/** `takeOverRunning`: the embedded store has one process, so at start-up every running job is an orphan. */
export async function startEtlJob(
  eventStore: EventStore,
  stream: string,
  worker: string,
  leaseMs: number,
  options: { now?: Date; takeOverRunning?: boolean } = {},
): Promise<ClaimedJob | null> {
  const now = options.now ?? new Date();
  const { state, revision } = await loadState(eventStore, stream, uploadState);
  const events = decideStartEtlJob(state, now, worker, leaseMs, options.takeOverRunning);
  if (events.length === 0 || revision === null) return null;
  try {
    const r = await eventStore.appendToStream(stream, events, { expectedRevision: revision });
    let next = state;
    for (const e of events) next = uploadState.evolve(next, e as never);
    return { stream, state: next, revision: r.nextExpectedRevision };
  } catch (err) {
    if (err instanceof ConcurrencyError) return null;
    throw err;
  }
}
