import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { ProviderFacts } from '../../src/catalog/providerFacts.js';
import { handleCommand } from '../shared/commandHandler.js';
import { categoriesOf } from './completeConsent.js';
import { connectionState, connectionStream, type ConnectionEvent } from './connection.js';

/**
 * The user changed at the provider what the grant covers (Garmin's `userPermissionsChange`): one
 * consent event per category that changed (contracts §7), the provider as actor and its
 * notification as evidence. Only a connection holding a grant changes; a change that leaves no
 * category is left to the caller (it disconnects). Answers the position, 0 when nothing changed.
 */
export async function changeProviderPermissions(
  eventStore: EventStore,
  input: { userId: string; provider: ProviderFacts; permissions: readonly string[]; at: string },
): Promise<number> {
  const result = await handleCommand(eventStore, connectionStream(input.userId, input.provider.slug), connectionState, (state): ConnectionEvent[] => {
    if ((state.status !== 'active' && state.status !== 'needs_reauth') || !state.tenantId) return [];
    const now = categoriesOf(input.provider, input.permissions);
    const base = { tenant_id: state.tenantId, user_id: input.userId, provider: input.provider.slug, actor_id: input.provider.slug, at: input.at };
    const evidence = `permissions changed at ${input.provider.name}; now: ${input.permissions.join(' ') || '(none)'}`;
    return [
      ...now.filter((c) => !state.categories.includes(c)).map((category): ConnectionEvent => ({ type: 'consent.granted', data: { ...base, category, evidence } })),
      ...state.categories.filter((c) => !now.includes(c)).map((category): ConnectionEvent => ({ type: 'consent.revoked', data: { ...base, category, evidence } })),
    ];
  });
  return result.newEvents.length > 0 ? result.position : 0;
}
