import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';

/**
 * A tenant's own keys for one provider (spec "Tenant provider keys"): one stream per tenant and
 * provider. Values are sealed before they reach an event (src/crypto/sealedValue.ts, purpose
 * PROVIDER_KEY_PURPOSE, owner `<tenant>:<provider>:<name>`); `application` identifies the
 * provider application the keys name (CLIENT_ID, REGION, ENVIRONMENT), so a replacement naming
 * another application is told from a rotated secret.
 */
export type ProviderKeysReplaced = Event<
  'provider_keys.replaced',
  {
    tenant_id: string;
    provider: string;
    sealed_values: Record<string, string>;
    client_id_masked: string;
    application: string;
    /** When the tenant's keys were first set (kept across replacements, new after a removal). */
    created_at: string;
    at: string;
    by: string;
  }
>;
export type ProviderKeysRemoved = Event<'provider_keys.removed', { tenant_id: string; provider: string; at: string; by: string }>;
/** The same values sealed again under the current SEALING_KEY (`datakeys reseal`, a rotation's second half). */
export type ProviderKeysResealed = Event<'provider_keys.resealed', { tenant_id: string; provider: string; sealed_values: Record<string, string>; at: string; by: string }>;
export type ProviderKeysEvent = ProviderKeysReplaced | ProviderKeysRemoved | ProviderKeysResealed;

export const PROVIDER_KEY_PURPOSE = 'provider key v1';
export const providerKeyOwner = (tenantId: string, provider: string, name: string) => `${tenantId}:${provider}:${name}`;
export const providerKeysStream = (tenantId: string, provider: string) => `provider-keys-${tenantId}-${provider}`;

export type ProviderKeysState = { set: boolean; application: string | null; createdAt: string | null; sealedValues: Record<string, string> };

export const providerKeysState: StreamState<ProviderKeysState, ProviderKeysEvent> = {
  initialState: () => ({ set: false, application: null, createdAt: null, sealedValues: {} }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'provider_keys.replaced':
        return { set: true, application: event.data.application, createdAt: event.data.created_at, sealedValues: event.data.sealed_values };
      case 'provider_keys.removed':
        return { set: false, application: null, createdAt: null, sealedValues: {} };
      case 'provider_keys.resealed':
        return { ...state, sealedValues: event.data.sealed_values };
      default:
        return state;
    }
  },
};

/** First and last four characters only (spec "Tenant provider keys"); shorter ids show nothing but their ends' stars. */
export function maskClientId(clientId: string): string {
  if (clientId.length <= 8) return `${clientId.slice(0, 1)}…${clientId.slice(-1)}`;
  return `${clientId.slice(0, 4)}…${clientId.slice(-4)}`;
}
