import type { EventStore } from '../../src/eventstore/eventStore.js';
import { deterministicId } from '../../src/shared/ids.js';
import { loadState } from '../shared/commandHandler.js';
import { externalRefState, externalRefStream } from '../users/externalRef.js';
import { userState, userStream, type UserDeletionRequested } from '../users/user.js';
import { deletionState, deletionStream } from './deletionJob.js';

/**
 * Carries a user deletion job to its end. Every step appends events with ids derived from the
 * job, so running it again after a crash at any point repeats nothing: the store drops appends
 * it already holds and each step checks the state it leaves behind.
 */
export type EraseUserSteps = {
  /** Resolves once no ingestion for the user is running, so no record lands after the erasure. */
  quiesceIngestion?: () => Promise<void>;
  /** Removes the user's raw payloads. */
  eraseRawPayloads?: () => Promise<void>;
};

export async function eraseUser(
  eventStore: EventStore,
  request: UserDeletionRequested['data'],
  steps: EraseUserSteps = {},
  now: () => Date = () => new Date(),
): Promise<void> {
  const jobId = request.job_id;
  const job = await loadState(eventStore, deletionStream(jobId), deletionState);
  if (job.state.status === 'done' || job.state.status === 'failed') return;
  const base = { job_id: jobId, tenant_id: request.tenant_id, user_id: request.user_id };
  if (job.state.status === 'pending') {
    await eventStore.appendToStream(deletionStream(jobId), [
      { id: deterministicId(jobId, 'started'), type: 'deletion.started', data: { ...base, started_at: now().toISOString() } },
    ]);
  }

  await steps.quiesceIngestion?.();
  const user = await loadState(eventStore, userStream(request.user_id), userState);
  if (user.state.status === 'deleting') {
    await eventStore.appendToStream(userStream(request.user_id), [
      { id: deterministicId(jobId, 'erased'), type: 'user.erased', data: { ...base, erased_at: now().toISOString() } },
    ]);
  }

  await steps.eraseRawPayloads?.();

  if (request.external_ref !== null) {
    const refStream = externalRefStream(request.tenant_id, request.external_ref);
    const ref = await loadState(eventStore, refStream, externalRefState);
    if (ref.state.claimedBy === request.user_id) {
      await eventStore.appendToStream(refStream, [
        {
          id: deterministicId(jobId, 'ref-released'),
          type: 'external_ref.released',
          data: { tenant_id: request.tenant_id, user_id: request.user_id, at: now().toISOString() },
        },
      ]);
    }
  }

  await eventStore.appendToStream(deletionStream(jobId), [
    {
      id: deterministicId(jobId, 'finished'),
      type: 'deletion.finished',
      data: { ...base, status: 'done', finished_at: now().toISOString(), error: null },
    },
  ]);
}
