import { CONNECTIONS, type ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import type { ConnectionFacts } from '../users/getFreshness.js';
import { pullFacts, type PullSchedule } from '../sync/syncFacts.js';

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
  // An active connection's health is what its pulls say; otherwise the connection's own (reconnect).
  health: d.status === 'active' && d.sync_health ? d.sync_health : d.health,
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
 * from the connection, with its refusal as `last_error`; `syncing`, `failing`, `next_pull_at`,
 * `last_notification_at` and `last_received_at` from its pulls (queries/sync/syncFacts.ts).
 */
export async function connectionFacts(readStore: ReadStore, tenantId: string, userId: string, pulls?: PullSchedule): Promise<ConnectionFacts[]> {
  const connections = await listConnections(readStore, tenantId, userId);
  const out: ConnectionFacts[] = [];
  for (const c of connections) {
    const p = await pullFacts(readStore, c, pulls);
    out.push({
      provider: c.provider,
      status: c.status,
      last_notification_at: p.lastNotificationAt,
      next_pull_at: p.nextPullAt,
      syncing: p.syncing,
      failing: p.failing,
      last_received_at: p.lastReceivedAt,
      // A disconnected connection is not failing (contracts §6: null when healthy): a pull that
      // failed before the user disconnected (a refusal racing the DELETE) is history, not its state.
      last_error: c.status === 'needs_reauth' ? c.last_error : c.status === 'disconnected' ? null : p.lastError,
    });
  }
  return out;
}
