import { StreamDeletedError, type Event, type EventStore } from '../../src/eventstore/eventStore.js';
import { deterministicId } from '../../src/shared/ids.js';
import { DomainError } from '../shared/domainError.js';

/**
 * A user's tokens live on their own stream, beside the user's (issue 26 point 3): mints and
 * revocations stay audited facts, but the user's stream, which uploads, ETL batches and pulls read
 * whole, keeps only lifecycle facts. Mints written before this change (`user.token_minted` on
 * `user-<id>`) are still honoured by the users projection and revoked the same way.
 */
export const userTokensStream = (userId: string) => `usertokens-${userId}`;

/** Every token of the user stops: written by the user's deletion request (and its job, should a crash cut the request short). */
export type UserTokensRevoked = Event<'user.tokens_revoked', { user_id: string; tenant_id: string; job_id: string; revoked_at: string }>;

export function tokensRevokedBy(d: { user_id: string; tenant_id: string; job_id: string; at: string }): UserTokensRevoked & { id: string } {
  return {
    id: deterministicId(d.job_id, 'tokens-revoked'),
    type: 'user.tokens_revoked',
    data: { user_id: d.user_id, tenant_id: d.tenant_id, job_id: d.job_id, revoked_at: d.at },
  };
}

/**
 * The revision of the user's token stream (null when it has none), read from its last event only:
 * a mint never folds the tokens before it. An erased user's stream answers `not_found`.
 */
export async function userTokensRevision(eventStore: EventStore, userId: string): Promise<number | null> {
  try {
    const [last] = await eventStore.readStream(userTokensStream(userId), { direction: 'backwards', maxCount: 1 });
    return last ? last.streamRevision : null;
  } catch (err) {
    if (err instanceof StreamDeletedError) throw new DomainError('not_found', 'user not found');
    throw err;
  }
}
