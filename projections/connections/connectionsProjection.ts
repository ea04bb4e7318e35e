import type { ConnectionEvent } from '../../commands/connections/connection.js';
import type { ConnectionSyncEvent, SyncHealth } from '../../commands/sync/connectionSync.js';
import { defineProjection } from '../../src/projector/projection.js';

/** A user's connection to a provider, as GET …/connections answers it (plus what the service needs to find it). */
export type ConnectionDoc = {
  _id: string;
  tenant_id: string;
  user_id: string;
  provider: string;
  status: 'active' | 'needs_reauth' | 'disconnected';
  scopes: string[];
  application: string;
  /** The provider's id of the user (Garmin's userId), null when the provider names none: pushes are routed by it. */
  provider_user_id?: string | null;
  last_sync_at: string | null;
  initial_backfill_at: string | null;
  created_at: string;
  updated_at: string;
  connected_at: string;
  health: { healthy: boolean; reason: string | null; action: string | null; since: string; retry_at: string | null };
  /** Health as pulls see it (rate limited, provider unavailable, pulls failing); shown while the connection is active. */
  sync_health?: SyncHealth | null;
  last_error: string | null;
};

/** An open consent request, found by the hash of the state the browser brings back. */
export type ConsentStateDoc = { _id: string; tenant_id: string; user_id: string; provider: string; expires_at: string };

/** One consent event (spec "Consent event"); `id` is the event's global position, so ids grow with time. */
export type ConsentEventDoc = {
  _id: string;
  id: number;
  tenant_id: string;
  user_id: string;
  at: string;
  provider: string;
  category: string;
  action: 'granted' | 'revoked';
  actor_id: string;
  evidence: string;
};

export const CONNECTIONS = 'connections';
export const CONSENT_STATES = 'consent_states';
export const CONSENT_EVENTS = 'consent_events';
export const connectionDocId = (userId: string, provider: string) => `${userId}:${provider}`;

export const connectionsProjection = defineProjection<ConnectionEvent | ConnectionSyncEvent>({
  name: 'connections',
  collections: [
    {
      name: CONNECTIONS,
      indexes: [{ fields: [['user_id', 1], ['provider', 1]] }, { fields: [['tenant_id', 1], ['provider', 1], ['status', 1]] }, { fields: [['provider', 1], ['provider_user_id', 1]] }],
    },
    // expires_at: the retention sweep removes states a day past their expiry (src/processes/retention/retentionSweep.ts).
    { name: CONSENT_STATES, indexes: [{ fields: [['user_id', 1], ['provider', 1]] }, { fields: [['expires_at', 1]] }] },
    { name: CONSENT_EVENTS, indexes: [{ fields: [['user_id', 1], ['id', -1]] }] },
  ],
  eventTypes: [
    'connection.consent_requested',
    'connection.established',
    'connection.consent_failed',
    'consent.granted',
    'consent.revoked',
    'connection.needs_reauth',
    'connection.disconnected',
    'connection.erased',
    'connection_sync.synced',
    'connection_sync.health_changed',
  ],
  evolve: (event) => {
    const d = event.data;
    const id = connectionDocId(d.user_id, d.provider);
    switch (event.type) {
      case 'connection.consent_requested':
        return [{ op: 'put', collection: CONSENT_STATES, doc: { _id: event.data.state_hash, tenant_id: d.tenant_id, user_id: d.user_id, provider: d.provider, expires_at: event.data.expires_at } }];
      case 'connection.consent_failed':
        return [{ op: 'delete', collection: CONSENT_STATES, id: event.data.state_hash }];
      case 'connection.established': {
        const at = event.data.at;
        return [
          { op: 'delete', collection: CONSENT_STATES, id: event.data.state_hash },
          {
            op: 'update',
            collection: CONNECTIONS,
            id,
            upsert: true,
            set: {
              tenant_id: d.tenant_id,
              user_id: d.user_id,
              provider: d.provider,
              status: 'active',
              scopes: event.data.scopes,
              application: event.data.application,
              provider_user_id: event.data.provider_user_id ?? null,
              updated_at: at,
              connected_at: at,
              health: { healthy: true, reason: null, action: null, since: at, retry_at: null },
              sync_health: null,
              last_error: null,
            },
            setOnInsert: { created_at: at, last_sync_at: null, initial_backfill_at: null },
          },
        ];
      }
      case 'connection.needs_reauth':
        return [
          {
            op: 'update',
            collection: CONNECTIONS,
            id,
            set: { status: 'needs_reauth', updated_at: event.data.at, last_error: event.data.error, health: { healthy: false, reason: event.data.reason, action: 'reconnect', since: event.data.at, retry_at: null } },
          },
        ];
      case 'connection.disconnected':
        return [
          {
            op: 'update',
            collection: CONNECTIONS,
            id,
            set: { status: 'disconnected', updated_at: event.data.at, health: { healthy: false, reason: 'disconnected', action: 'reconnect', since: event.data.at, retry_at: null } },
          },
        ];
      case 'connection.erased':
        return [
          { op: 'delete', collection: CONNECTIONS, id },
          { op: 'deleteMany', collection: CONSENT_STATES, filter: { user_id: d.user_id, provider: d.provider } },
        ];
      case 'connection_sync.synced':
        return [
          {
            op: 'update',
            collection: CONNECTIONS,
            id,
            set: { last_sync_at: event.data.at, ...(event.data.initial_backfill ? { initial_backfill_at: event.data.at } : {}) },
          },
        ];
      case 'connection_sync.health_changed':
        return [{ op: 'update', collection: CONNECTIONS, id, set: { sync_health: event.data.health } }];
      case 'consent.granted':
      case 'consent.revoked':
        return [
          {
            op: 'put',
            collection: CONSENT_EVENTS,
            doc: {
              _id: String(event.globalPosition),
              id: event.globalPosition,
              tenant_id: d.tenant_id,
              user_id: d.user_id,
              at: event.data.at,
              provider: d.provider,
              category: event.data.category,
              action: event.type === 'consent.granted' ? 'granted' : 'revoked',
              actor_id: event.data.actor_id,
              evidence: event.data.evidence,
            },
          },
        ];
      default:
        return [];
    }
  },
});
