import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { ValueSealer } from '../../src/crypto/sealedValue.js';
import { handleCommand } from '../shared/commandHandler.js';
import type { ConnectionCredentials } from './connectionCredentials.js';
import { connectionOwner, connectionState, connectionStream, TOKEN_PURPOSE, type ConnectionEvent, type ConnectionState } from './connection.js';
import { PROVIDER_KEY_PURPOSE, providerKeyOwner, providerKeysState, providerKeysStream, type ProviderKeysEvent, type ProviderKeysState } from './providerKeys.js';

/**
 * The second half of a SEALING_KEY rotation for the connection secrets (docs/erasure.md,
 * "Rotating SEALING_KEY"): a tenant's provider keys and a connection's OAuth tokens still sealed
 * under a previous key are sealed again under the current one, as an event on their own stream.
 * PKCE verifiers are not: they live ten minutes, and open under SEALING_KEY_PREVIOUS meanwhile.
 * A repeat reseals nothing. A connection's refreshed tokens, in its credentials record, are
 * resealed in place (conditional on the record's version: a refresh meanwhile sealed under the
 * current key anyway).
 */
export function decideResealProviderKeys(state: ProviderKeysState, tenantId: string, provider: string, sealer: ValueSealer, at: string): ProviderKeysEvent[] {
  if (!state.set) return [];
  let changed = false;
  const sealed: Record<string, string> = {};
  for (const [name, value] of Object.entries(state.sealedValues)) {
    const again = sealer.reseal(PROVIDER_KEY_PURPOSE, providerKeyOwner(tenantId, provider, name), value);
    if (again !== null) changed = true;
    sealed[name] = again ?? value;
  }
  if (!changed) return [];
  return [{ type: 'provider_keys.resealed', data: { tenant_id: tenantId, provider, sealed_values: sealed, at, by: 'sealing-key-rotation' } }];
}

export function decideResealTokens(state: ConnectionState, userId: string, provider: string, sealer: ValueSealer, at: string): ConnectionEvent[] {
  if (!state.tokensSealed || !state.tenantId) return [];
  const again = sealer.reseal(TOKEN_PURPOSE, connectionOwner(userId, provider), state.tokensSealed);
  if (again === null) return [];
  return [{ type: 'connection.tokens_resealed', data: { tenant_id: state.tenantId, user_id: userId, provider, tokens_sealed: again, at } }];
}

export async function resealProviderKeys(eventStore: EventStore, sealer: ValueSealer, cmd: { tenantId: string; provider: string; at: string }): Promise<{ live: boolean; resealed: boolean }> {
  const result = await handleCommand(eventStore, providerKeysStream(cmd.tenantId, cmd.provider), providerKeysState, (state) =>
    decideResealProviderKeys(state, cmd.tenantId, cmd.provider, sealer, cmd.at),
  );
  return { live: result.state.set, resealed: result.newEvents.length > 0 };
}

export async function resealConnectionTokens(
  eventStore: EventStore,
  sealer: ValueSealer,
  credentials: ConnectionCredentials,
  cmd: { userId: string; provider: string; at: string },
): Promise<{ live: boolean; resealed: boolean }> {
  const result = await handleCommand(eventStore, connectionStream(cmd.userId, cmd.provider), connectionState, (state) =>
    decideResealTokens(state, cmd.userId, cmd.provider, sealer, cmd.at),
  );
  const { state } = result;
  const current = await credentials.current(cmd.userId, cmd.provider, state);
  const again = current?.fromRecord ? sealer.reseal(TOKEN_PURPOSE, connectionOwner(cmd.userId, cmd.provider), current.tokensSealed) : null;
  const record = again !== null && (await credentials.store({ tenantId: state.tenantId!, userId: cmd.userId, provider: cmd.provider }, state.grant!, again, current!.version, new Date(cmd.at)));
  return { live: state.tokensSealed !== null, resealed: result.newEvents.length > 0 || record };
}
