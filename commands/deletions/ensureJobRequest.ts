import type { EventStore, RecordedEvent } from '../../src/eventstore/eventStore.js';
import { loadState } from '../shared/commandHandler.js';
import { jobRequestOf, revocationOf } from '../users/requestUserDeletion.js';
import { userTokensStream } from '../users/userTokens.js';
import { userStream, type UserEvent } from '../users/user.js';
import { deletionState, deletionStream, type DeletionState } from './deletionJob.js';

/**
 * A user deletion writes its request on the user's stream first, then the tokens' revocation, then
 * the job's stream. When a crash fell between, both are completed from the user's stream before the job runs
 * (the user's stream goes with the user; the job's stays). Answers the job's state, or null when
 * no request for the job can be found.
 */
export async function ensureJobRequest(eventStore: EventStore, jobId: string, userId: string): Promise<{ state: DeletionState; revision: number | null } | null> {
  const job = await loadState(eventStore, deletionStream(jobId), deletionState);
  if (job.state.request) return job;
  let events: RecordedEvent<UserEvent>[] = [];
  try {
    events = (await eventStore.readStream(userStream(userId))) as RecordedEvent<UserEvent>[];
  } catch {
    return null;
  }
  const requested = events.find((e) => e.type === 'user.deletion_requested' && e.data.job_id === jobId);
  if (!requested || requested.type !== 'user.deletion_requested') return null;
  // The revocation first, as the request writes it; its fixed id makes a repeat write nothing.
  await eventStore.appendToStream(userTokensStream(userId), [revocationOf(requested.data)], { expectedRevision: 'any' });
  await eventStore.appendToStream(deletionStream(jobId), [jobRequestOf(requested.data)]);
  return loadState(eventStore, deletionStream(jobId), deletionState);
}
