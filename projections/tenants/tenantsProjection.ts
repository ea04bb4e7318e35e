import type { TenantEvent } from '../../commands/tenants/tenant.js';
import { defineProjection } from '../../src/projector/projection.js';

export type TenantDoc = { _id: string; id: string; name: string; created_at: string };
/** Keyed by the key's SHA-256, so authentication is one indexed lookup. */
export type ApiKeyDoc = { _id: string; key_id: string; tenant_id: string; created_at: string; revoked_at: string | null };

export const tenantsProjection = defineProjection<TenantEvent>({
  name: 'tenants',
  collections: [
    { name: 'tenants', indexes: [{ fields: [['created_at', 1]] }] },
    { name: 'api_keys', indexes: [{ fields: [['key_id', 1]], unique: true }, { fields: [['tenant_id', 1]] }] },
  ],
  eventTypes: ['tenant.created', 'tenant.api_key_issued', 'tenant.api_key_revoked'],
  evolve: (event) => {
    switch (event.type) {
      case 'tenant.created': {
        const d = event.data;
        return [{ op: 'put', collection: 'tenants', doc: { _id: d.tenant_id, id: d.tenant_id, name: d.name, created_at: d.created_at } }];
      }
      case 'tenant.api_key_issued': {
        const d = event.data;
        return [
          {
            op: 'put',
            collection: 'api_keys',
            doc: { _id: d.key_hash, key_id: d.key_id, tenant_id: d.tenant_id, created_at: d.created_at, revoked_at: null },
          },
        ];
      }
      case 'tenant.api_key_revoked':
        return [{ op: 'update', collection: 'api_keys', id: event.data.key_hash, set: { revoked_at: event.data.revoked_at } }];
    }
  },
});
