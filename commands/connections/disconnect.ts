import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand, loadState } from '../shared/commandHandler.js';
import { isVisibleTo, userState, userStream } from '../users/user.js';
import { connectionState, connectionStream, type ConnectionEvent } from './connection.js';

/**
 * DELETE /v1/users/{id}/connections/{provider} (spec "Connection": any → disconnected): every
 * granted category is revoked with the caller as actor. A connection already disconnected stays
 * so and nothing is appended; a provider never connected is a 404. Answers the grant the
 * connection held with the tokens its event carried, so the caller can revoke the grant at the
 * provider (best effort) with the newest tokens of its credentials record.
 */
export async function disconnect(eventStore: EventStore, input: { tenantId: string; userId: string; provider: string; reason: string; at: string; by: string }) {
  const user = (await loadState(eventStore, userStream(input.userId), userState)).state;
  if (!isVisibleTo(user, input.tenantId) || user.status !== 'active') throw new DomainError('not_found', 'user not found');
  let held: { grant: string | null; tokensSealed: string | null } = { grant: null, tokensSealed: null };
  const result = await handleCommand(eventStore, connectionStream(input.userId, input.provider), connectionState, (state): ConnectionEvent[] => {
    if (state.status === 'none' || state.tenantId !== input.tenantId) throw new DomainError('not_found', `the user has no ${input.provider} connection`);
    if (state.status === 'disconnected') return [];
    held = { grant: state.grant, tokensSealed: state.tokensSealed };
    const base = { tenant_id: input.tenantId, user_id: input.userId, provider: input.provider };
    return [
      { type: 'connection.disconnected', data: { ...base, reason: input.reason, at: input.at, by: input.by } },
      ...state.categories.map((category): ConnectionEvent => ({ type: 'consent.revoked', data: { ...base, category, actor_id: input.by, evidence: input.reason, at: input.at } })),
    ];
  });
  return { position: result.position, ...(held as typeof held) };
}
