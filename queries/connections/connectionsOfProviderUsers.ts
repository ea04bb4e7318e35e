import { CONNECTIONS, type ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import type { ReadStore } from '../../src/readstore/readStore.js';

/** How many ids one `$in` query names at most: a delivery's lookups are a few bounded queries. */
export const IDS_PER_QUERY = 500;

/**
 * The connections each provider user id names (any tenant, any status), by id: a push or webhook
 * names users only by the provider's ids, one person may be connected by several tenants, and a
 * delivery naming many users takes one indexed query per IDS_PER_QUERY ids, not one per user.
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
