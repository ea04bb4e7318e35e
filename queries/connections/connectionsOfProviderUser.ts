import { CONNECTIONS, type ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import type { ReadStore } from '../../src/readstore/readStore.js';

/**
 * The connections a provider's user id names (any tenant, any status): a push names the user only
 * by the provider's id, and one person may be connected by several tenants.
 */
export async function connectionsOfProviderUser(readStore: ReadStore, provider: string, providerUserId: string): Promise<ConnectionDoc[]> {
  return readStore.find<ConnectionDoc>(CONNECTIONS, { filter: { provider, provider_user_id: providerUserId } });
}
