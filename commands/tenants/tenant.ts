import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';

export type TenantCreated = Event<'tenant.created', { tenant_id: string; name: string; created_at: string; created_by: string }>;
export type TenantApiKeyIssued = Event<
  'tenant.api_key_issued',
  { tenant_id: string; key_id: string; key_hash: string; created_at: string; issued_by: string }
>;
export type TenantApiKeyRevoked = Event<
  'tenant.api_key_revoked',
  { tenant_id: string; key_id: string; key_hash: string; revoked_at: string; revoked_by: string }
>;
export type TenantEvent = TenantCreated | TenantApiKeyIssued | TenantApiKeyRevoked;

export const tenantStream = (tenantId: string) => `tenant-${tenantId}`;

export type TenantState = { exists: boolean; name: string | null; keys: Record<string, { hash: string; revoked: boolean }> };

export const tenantState: StreamState<TenantState, TenantEvent> = {
  initialState: () => ({ exists: false, name: null, keys: {} }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'tenant.created':
        return { ...state, exists: true, name: event.data.name };
      case 'tenant.api_key_issued':
        return { ...state, keys: { ...state.keys, [event.data.key_id]: { hash: event.data.key_hash, revoked: false } } };
      case 'tenant.api_key_revoked':
        return { ...state, keys: { ...state.keys, [event.data.key_id]: { hash: event.data.key_hash, revoked: true } } };
      default:
        return state;
    }
  },
};
