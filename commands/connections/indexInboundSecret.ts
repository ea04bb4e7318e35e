import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { ValueSealer } from '../../src/crypto/sealedValue.js';
import { handleCommand } from '../shared/commandHandler.js';
import {
  INBOUND_SECRET_KEY,
  inboundSecretDigest,
  PROVIDER_KEY_PURPOSE,
  providerKeyOwner,
  providerKeysState,
  providerKeysStream,
  type ProviderKeysInboundSecretIndexed,
  type ProviderKeysState,
} from './providerKeys.js';

/**
 * Keys set before `provider_keys.replaced` carried the digest of their INBOUND_SECRET get it
 * now, so that the inbound route finds their application by the address alone (issue 20).
 * Nothing for keys without that secret, keys indexed already, or a secret that no longer opens
 * (the keys are in `error`; setting them again indexes them). A repeat appends nothing.
 */
export function decideIndexInboundSecret(state: ProviderKeysState, tenantId: string, provider: string, sealer: ValueSealer, at: string): ProviderKeysInboundSecretIndexed[] {
  const sealed = state.sealedValues[INBOUND_SECRET_KEY];
  if (!state.set || !sealed || state.inboundSecretDigest) return [];
  let secret: string;
  try {
    secret = sealer.open(PROVIDER_KEY_PURPOSE, providerKeyOwner(tenantId, provider, INBOUND_SECRET_KEY), sealed);
  } catch {
    return [];
  }
  return [{ type: 'provider_keys.inbound_secret_indexed', data: { tenant_id: tenantId, provider, inbound_secret_digest: inboundSecretDigest(secret), at } }];
}

export async function indexInboundSecret(eventStore: EventStore, sealer: ValueSealer, cmd: { tenantId: string; provider: string; at: string }): Promise<boolean> {
  const result = await handleCommand(eventStore, providerKeysStream(cmd.tenantId, cmd.provider), providerKeysState, (state) =>
    decideIndexInboundSecret(state, cmd.tenantId, cmd.provider, sealer, cmd.at),
  );
  return result.newEvents.length > 0;
}
