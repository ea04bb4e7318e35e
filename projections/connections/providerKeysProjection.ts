import type { ProviderKeysEvent } from '../../commands/connections/providerKeys.js';
import { defineProjection } from '../../src/projector/projection.js';

/** A tenant's own keys per provider, values sealed as the event holds them (never served). */
export type ProviderKeysDoc = {
  _id: string;
  tenant_id: string;
  provider: string;
  sealed_values: Record<string, string>;
  client_id_masked: string;
  application: string;
  /** SHA-256 of the INBOUND_SECRET key (Garmin), null without one: the inbound route's index (issue 20). */
  inbound_secret_digest: string | null;
  created_at: string;
  updated_at: string;
  updated_by: string;
};

export const PROVIDER_KEYS = 'provider_keys';
export const providerKeysDocId = (tenantId: string, provider: string) => `${tenantId}:${provider}`;

export const providerKeysProjection = defineProjection<ProviderKeysEvent>({
  name: 'provider_keys',
  collections: [{ name: PROVIDER_KEYS, indexes: [{ fields: [['tenant_id', 1], ['provider', 1]] }, { fields: [['inbound_secret_digest', 1]] }] }],
  eventTypes: ['provider_keys.replaced', 'provider_keys.removed', 'provider_keys.resealed', 'provider_keys.inbound_secret_indexed'],
  evolve: (event) => {
    const d = event.data;
    const id = providerKeysDocId(d.tenant_id, d.provider);
    if (event.type === 'provider_keys.removed') return [{ op: 'delete', collection: PROVIDER_KEYS, id }];
    if (event.type === 'provider_keys.resealed') return [{ op: 'update', collection: PROVIDER_KEYS, id, set: { sealed_values: event.data.sealed_values } }];
    if (event.type === 'provider_keys.inbound_secret_indexed') return [{ op: 'update', collection: PROVIDER_KEYS, id, set: { inbound_secret_digest: event.data.inbound_secret_digest } }];
    return [
      {
        op: 'put',
        collection: PROVIDER_KEYS,
        doc: {
          _id: id,
          tenant_id: d.tenant_id,
          provider: d.provider,
          sealed_values: event.data.sealed_values,
          client_id_masked: event.data.client_id_masked,
          application: event.data.application,
          inbound_secret_digest: event.data.inbound_secret_digest ?? null,
          created_at: event.data.created_at,
          updated_at: event.data.at,
          updated_by: event.data.by,
        },
      },
    ];
  },
});
