import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { deterministicId } from '../../src/shared/ids.js';
import { deletionState, deletionStream, type DeletionRequested, type DeletionState } from '../deletions/deletionJob.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand, loadState } from '../shared/commandHandler.js';
import { isVisibleTo, userState, userStream, type UserDeletionRequested, type UserEvent, type UserState } from './user.js';
import { tokensRevokedBy, userTokensStream } from './userTokens.js';

export const RequestUserDeletionInput = z.object({
  tenantId: z.string().uuid(),
  userId: z.string().uuid(),
  jobId: z.string().uuid(),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type RequestUserDeletion = z.infer<typeof RequestUserDeletionInput>;

/**
 * The request is the commit point of a deletion: from here reads are 404 and tokens stop.
 * Asking again while the job is unfinished answers the same job; asking again after it failed
 * starts a new one (every step of a deletion can run again).
 */
export function decideRequestUserDeletion(cmd: RequestUserDeletion, state: UserState, currentJob: DeletionState | null): UserEvent[] {
  if (!isVisibleTo(state, cmd.tenantId) || state.status === 'erased') throw new DomainError('not_found', 'user not found');
  if (state.status === 'deleting' && currentJob?.status !== 'failed') return [];
  return [
    {
      type: 'user.deletion_requested',
      data: { user_id: cmd.userId, tenant_id: cmd.tenantId, job_id: cmd.jobId, external_ref: state.externalRef, requested_at: cmd.at, requested_by: cmd.by },
    },
  ];
}

/**
 * Writes the request on the user's stream (the commit point), then the revocation of every token
 * on the user's token stream (which fences a mint racing the request: mintUserToken), then the
 * job's own stream, which outlives the user. A crash after the first leaves a job the deletion
 * runner completes from the user's stream, revocation included.
 */
export async function requestUserDeletion(eventStore: EventStore, input: RequestUserDeletion) {
  const cmd = RequestUserDeletionInput.parse(input);
  const before = (await loadState(eventStore, userStream(cmd.userId), userState)).state;
  const currentJob = before.deletionJobId ? (await loadState(eventStore, deletionStream(before.deletionJobId), deletionState)).state : null;
  const result = await handleCommand(eventStore, userStream(cmd.userId), userState, (state) =>
    decideRequestUserDeletion(cmd, state, state.deletionJobId === before.deletionJobId ? currentJob : null),
  );
  const jobId = result.state.deletionJobId!;
  const requested = result.newEvents[0] as UserDeletionRequested | undefined;
  let position = result.position;
  if (requested) {
    const revoked = await eventStore.appendToStream(userTokensStream(cmd.userId), [revocationOf(requested.data)], { expectedRevision: 'any' });
    position = Math.max(position, revoked.lastPosition);
    const job = await eventStore.appendToStream(deletionStream(jobId), [jobRequestOf(requested.data)]);
    position = Math.max(position, job.lastPosition);
  }
  return { ...result, position, jobId };
}

/** The job stream's first event, from the user's request (also used to complete a request a crash cut short). */
export function jobRequestOf(d: UserDeletionRequested['data']): DeletionRequested & { id: string } {
  return {
    id: deterministicId(d.job_id, 'requested'),
    type: 'deletion.requested',
    data: {
      job_id: d.job_id,
      tenant_id: d.tenant_id,
      user_id: d.user_id,
      provider: null,
      generation: null,
      external_ref: d.external_ref,
      requested_at: d.requested_at,
      requested_by: d.requested_by,
    },
  };
}

/** The token revocation a deletion request makes (also written by its job, should a crash have cut the request short). */
export function revocationOf(d: UserDeletionRequested['data']) {
  return tokensRevokedBy({ user_id: d.user_id, tenant_id: d.tenant_id, job_id: d.job_id, at: d.requested_at });
}
