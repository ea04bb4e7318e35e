import { CONNECTIONS, type ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import type { ReadStore } from '../../src/readstore/readStore.js';

/** How many provider user ids one query names at most. */
const IDS_PER_QUERY = 500;

/**
 * The connections a provider's user id names (any tenant, any status): a push names the user only
 * by the provider's id, and one person may be connected by several tenants.
 */
export async function connectionsOfProviderUser(readStore: ReadStore, provider: string, providerUserId: string): Promise<ConnectionDoc[]> {
  return readStore.find<ConnectionDoc>(CONNECTIONS, { filter: { provider, provider_user_id: providerUserId } });
}

/**
 * The connections of many provider user ids at once (a delivery naming several users), by id:
 * one indexed query per IDS_PER_QUERY ids instead of one per user.
 */
export async function connectionsOfProviderUsers(readStore: ReadStore, provider: string, providerUserIds: Iterable<string>): Promise<Map<string, ConnectionDoc[]>> {
  const ids = [...new Set(providerUserIds)];
  const byUser = new Map<string, ConnectionDoc[]>(ids.map((id) => [id, []]));
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const docs = await readStore.find<ConnectionDoc>(CONNECTIONS, { filter: { provider, provider_user_id: { $in: ids.slice(i, i + IDS_PER_QUERY) } } });
    for (const d of docs) byUser.get(d.provider_user_id as string)?.push(d);
  }
  return byUser;
}
