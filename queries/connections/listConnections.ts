import { CONNECTIONS, type ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import type { ConnectionFacts } from '../users/getFreshness.js';

/** The Connection resource (spec "Connection"): what the tenant sees of a connection. */
export type ConnectionView = Pick<
  ConnectionDoc,
  'provider' | 'status' | 'scopes' | 'last_sync_at' | 'initial_backfill_at' | 'created_at' | 'updated_at' | 'connected_at' | 'health'
>;

export const toConnectionView = (d: ConnectionDoc): ConnectionView => ({
  provider: d.provider,
  status: d.status,
  scopes: d.scopes,
  last_sync_at: d.last_sync_at,
  initial_backfill_at: d.initial_backfill_at,
  created_at: d.created_at,
  updated_at: d.updated_at,
  connected_at: d.connected_at,
  health: d.health,
});

/** One per provider the user ever connected, disconnected ones included (their health says so). */
export async function listConnections(readStore: ReadStore, tenantId: string, userId: string): Promise<ConnectionDoc[]> {
  return readStore.find<ConnectionDoc>(CONNECTIONS, { filter: { user_id: userId, tenant_id: tenantId }, sort: [['provider', 1]] });
}

export async function getConnection(readStore: ReadStore, tenantId: string, userId: string, provider: string): Promise<ConnectionDoc | null> {
  const doc = await readStore.get<ConnectionDoc>(CONNECTIONS, `${userId}:${provider}`);
  return doc && doc.tenant_id === tenantId ? doc : null;
}

/** Active connections of a tenant's provider: the ones new keys naming another application send back to consent. */
export async function activeConnectionsOf(readStore: ReadStore, tenantId: string, provider: string): Promise<ConnectionDoc[]> {
  return readStore.find<ConnectionDoc>(CONNECTIONS, { filter: { tenant_id: tenantId, provider, status: 'active' } });
}

/**
 * What a user's connections tell freshness (contracts §6): `disconnected` and `needs_reauth` come
 * from the connection, with its refusal as `last_error`. No pulls run yet, so nothing is syncing
 * from a connection and `next_pull_at` is null.
 */
export async function connectionFacts(readStore: ReadStore, tenantId: string, userId: string): Promise<ConnectionFacts[]> {
  return (await listConnections(readStore, tenantId, userId)).map((c) => ({
    provider: c.provider,
    status: c.status,
    last_notification_at: null,
    next_pull_at: null,
    last_error: c.status === 'needs_reauth' ? c.last_error : null,
  }));
}
