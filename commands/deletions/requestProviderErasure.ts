import { z } from 'zod';
import { ConcurrencyError, StreamDeletedError, type EventStore } from '../../src/eventstore/eventStore.js';
import { deterministicId } from '../../src/shared/ids.js';
import { DomainError } from '../shared/domainError.js';
import { loadState } from '../shared/commandHandler.js';
import { isVisibleTo, userState, userStream, type UserState } from '../users/user.js';
import { deletionStream, type DeletionRequested } from './deletionJob.js';
import { loadProviderDataHead, providerDataStream, type ProviderDataHead, type ProviderErasureRequested } from './providerData.js';

export const RequestProviderErasureInput = z.object({
  tenantId: z.string().uuid(),
  userId: z.string().uuid(),
  provider: z.string().min(1).max(64),
  at: z.string().datetime(),
  by: z.string().min(1),
  /**
   * The user still holds a connection to the provider (spec: erasing a connected provider is a
   * 409). A disconnect with delete_data=true asks after disconnecting, with false.
   */
  connected: z.boolean().default(false),
});
export type RequestProviderErasure = z.input<typeof RequestProviderErasureInput>;

/** The job that erases a generation: the same for every request made while that generation is current. */
export const providerErasureJobId = (userId: string, provider: string, generation: number) =>
  deterministicId(providerDataStream(userId, provider), 'erasure', String(generation));

export type ProviderErasureDecision = { kind: 'existing'; jobId: string } | { kind: 'new'; jobId: string; generation: number };

/**
 * Spec "Provider erasure": a repeated request while a job is unfinished answers that job; a user
 * still connected is a 409; a user being deleted, of another tenant or unknown is a 404.
 */
export function decideProviderErasure(cmd: z.infer<typeof RequestProviderErasureInput>, user: UserState, head: ProviderDataHead): ProviderErasureDecision {
  if (!isVisibleTo(user, cmd.tenantId) || user.status !== 'active' || head.closed) throw new DomainError('not_found', 'user not found');
  if (head.erasingJob) return { kind: 'existing', jobId: head.erasingJob };
  if (cmd.connected) throw new DomainError('conflict', `the user is still connected to ${cmd.provider}; disconnect first (or disconnect with delete_data=true)`);
  return { kind: 'new', jobId: providerErasureJobId(cmd.userId, cmd.provider, head.generation), generation: head.generation };
}

/**
 * Creates the job first (its stream, with an id derived from the ledger and generation, so two
 * racing requests create the same job), then closes the provider's ledger to new data at the
 * revision read. A crash between the two leaves a pending job whose run closes the ledger itself.
 * Answers the job and the position the caller's next reads should wait for.
 */
export async function requestProviderErasure(eventStore: EventStore, input: RequestProviderErasure, attempts = 5): Promise<{ jobId: string; created: boolean; position: number }> {
  const cmd = RequestProviderErasureInput.parse(input);
  const user = (await loadState(eventStore, userStream(cmd.userId), userState)).state;
  for (let attempt = 0; ; attempt++) {
    const head = await loadProviderDataHead(eventStore, cmd.userId, cmd.provider);
    const decision = decideProviderErasure(cmd, user, head);
    if (decision.kind === 'existing') return { jobId: decision.jobId, created: false, position: 0 };
    const { jobId, generation } = decision;
    const requested: DeletionRequested = {
      type: 'deletion.requested',
      data: {
        job_id: jobId,
        tenant_id: cmd.tenantId,
        user_id: cmd.userId,
        provider: cmd.provider,
        generation,
        external_ref: user.externalRef,
        requested_at: cmd.at,
        requested_by: cmd.by,
      },
    };
    const job = await eventStore.appendToStream(deletionStream(jobId), [{ ...requested, id: deterministicId(jobId, 'requested') }]);
    const closing: ProviderErasureRequested = {
      type: 'provider_data.erasure_requested',
      data: { user_id: cmd.userId, tenant_id: cmd.tenantId, provider: cmd.provider, generation, job_id: jobId, requested_at: cmd.at },
    };
    try {
      const closed = await eventStore.appendToStream(providerDataStream(cmd.userId, cmd.provider), [{ ...closing, id: deterministicId(jobId, 'ledger-requested') }], {
        expectedRevision: head.revision ?? 'no_stream',
      });
      return { jobId, created: !job.replayed, position: Math.max(job.lastPosition, closed.lastPosition) };
    } catch (err) {
      if (err instanceof StreamDeletedError) throw new DomainError('not_found', 'user not found');
      if (err instanceof ConcurrencyError && attempt < attempts) continue;
      throw err;
    }
  }
}
