import type { EventStore } from '../../src/eventstore/eventStore.js';
import { handleCommand } from '../shared/commandHandler.js';
import { providerKeysState, providerKeysStream, type ProviderKeysRemoved } from './providerKeys.js';

/** Removing keys that are not set changes nothing (the answer is the `not_set` resource either way). */
export async function removeProviderKeys(eventStore: EventStore, input: { tenantId: string; provider: string; at: string; by: string }) {
  return handleCommand(eventStore, providerKeysStream(input.tenantId, input.provider), providerKeysState, (state): ProviderKeysRemoved[] =>
    state.set ? [{ type: 'provider_keys.removed', data: { tenant_id: input.tenantId, provider: input.provider, at: input.at, by: input.by } }] : [],
  );
}
