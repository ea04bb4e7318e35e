import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { isVisibleTo, userState, userStream, type UserEvent, type UserState } from './user.js';

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
 * Asking again while the job runs answers the same job instead of starting another.
 */
export function decideRequestUserDeletion(cmd: RequestUserDeletion, state: UserState): UserEvent[] {
  if (!isVisibleTo(state, cmd.tenantId) || state.status === 'erased') throw new DomainError('not_found', 'user not found');
  if (state.status === 'deleting') return [];
  return [
    {
      type: 'user.deletion_requested',
      data: { user_id: cmd.userId, tenant_id: cmd.tenantId, job_id: cmd.jobId, external_ref: state.externalRef, requested_at: cmd.at, requested_by: cmd.by },
    },
  ];
}

export async function requestUserDeletion(eventStore: EventStore, input: RequestUserDeletion) {
  const cmd = RequestUserDeletionInput.parse(input);
  const result = await handleCommand(eventStore, userStream(cmd.userId), userState, (state) => decideRequestUserDeletion(cmd, state));
  return { ...result, jobId: result.state.deletionJobId! };
}
