import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';
import { sha256Hex } from '../../src/shared/secrets.js';

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
    /**
     * SHA-256 (hex) of the INBOUND_SECRET key when the keys hold one (Garmin): the inbound route
     * finds the application from the address by it, before it reads anything (issue 20). Absent
     * from events written before it existed (`provider_keys.inbound_secret_indexed` adds it).
     */
    inbound_secret_digest?: string;
    at: string;
    by: string;
  }
>;
export type ProviderKeysRemoved = Event<'provider_keys.removed', { tenant_id: string; provider: string; at: string; by: string }>;
/** The same values sealed again under the current SEALING_KEY (`datakeys reseal`, a rotation's second half). */
export type ProviderKeysResealed = Event<'provider_keys.resealed', { tenant_id: string; provider: string; sealed_values: Record<string, string>; at: string; by: string }>;
/** The digest of an INBOUND_SECRET set before keys carried one (computed once at start-up, `indexInboundSecrets`). */
export type ProviderKeysInboundSecretIndexed = Event<'provider_keys.inbound_secret_indexed', { tenant_id: string; provider: string; inbound_secret_digest: string; at: string }>;
export type ProviderKeysEvent = ProviderKeysReplaced | ProviderKeysRemoved | ProviderKeysResealed | ProviderKeysInboundSecretIndexed;

export const PROVIDER_KEY_PURPOSE = 'provider key v1';
export const providerKeyOwner = (tenantId: string, provider: string, name: string) => `${tenantId}:${provider}:${name}`;
export const providerKeysStream = (tenantId: string, provider: string) => `provider-keys-${tenantId}-${provider}`;

/** The key whose digest the provider-keys read model indexes: the secret path segment of a push provider's inbound address. */
export const INBOUND_SECRET_KEY = 'INBOUND_SECRET';
/** How an inbound secret is indexed and looked up; never the secret itself. */
export const inboundSecretDigest = (secret: string): string => sha256Hex(secret);

export type ProviderKeysState = {
  set: boolean;
  application: string | null;
  createdAt: string | null;
  sealedValues: Record<string, string>;
  inboundSecretDigest: string | null;
};

export const providerKeysState: StreamState<ProviderKeysState, ProviderKeysEvent> = {
  initialState: () => ({ set: false, application: null, createdAt: null, sealedValues: {}, inboundSecretDigest: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'provider_keys.replaced':
        return {
          set: true,
          application: event.data.application,
          createdAt: event.data.created_at,
          sealedValues: event.data.sealed_values,
          inboundSecretDigest: event.data.inbound_secret_digest ?? null,
        };
      case 'provider_keys.removed':
        return { set: false, application: null, createdAt: null, sealedValues: {}, inboundSecretDigest: null };
      case 'provider_keys.resealed':
        return { ...state, sealedValues: event.data.sealed_values };
      case 'provider_keys.inbound_secret_indexed':
        return { ...state, inboundSecretDigest: event.data.inbound_secret_digest };
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
