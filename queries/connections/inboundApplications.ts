import { inboundSecretDigest } from '../../commands/connections/providerKeys.js';
import type { ConnectionDoc } from '../../projections/connections/connectionsProjection.js';
import { PROVIDER_KEYS, type ProviderKeysDoc } from '../../projections/connections/providerKeysProjection.js';
import type { ProviderSettings } from '../../src/catalog/providerFacts.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { digestsEqual } from '../../src/shared/secrets.js';
import { IDS_PER_QUERY } from './connectionsOfProviderUsers.js';

/**
 * The applications a push provider's inbound address names by its secret: the instance's (the
 * secret is `<SLUG>_INBOUND_SECRET`) and each tenant's own keys whose INBOUND_SECRET it is, by
 * tenant. Found by the digest the provider-keys read model indexes (one indexed query; the
 * secret is never stored, nothing is unsealed).
 */
export type InboundApplications = {
  instance: boolean;
  /** Tenant → the application of its own keys holding this secret. */
  tenants: ReadonlyMap<string, string>;
};

/** Null when the secret is no application's: the caller answers 401 before reading the body. */
export async function inboundApplicationsOf(readStore: ReadStore, settings: Record<string, ProviderSettings>, provider: string, secret: string): Promise<InboundApplications | null> {
  const digest = inboundSecretDigest(secret);
  const configured = settings[provider]?.inboundSecret;
  const instance = configured !== undefined && digestsEqual(digest, inboundSecretDigest(configured));
  const docs = await readStore.find<ProviderKeysDoc>(PROVIDER_KEYS, { filter: { inbound_secret_digest: digest, provider } });
  const tenants = new Map(docs.map((d) => [d.tenant_id, d.application]));
  return instance || tenants.size > 0 ? { instance, tenants } : null;
}

/**
 * Keeps the connections made under an application the address names and that their tenant
 * connects with now: its own keys' application when the address holds their secret; the
 * instance's when the address is the instance's and the tenant has no keys of its own for the
 * provider. One query for the tenants relying on the instance's keys, in bounded chunks.
 */
export async function connectionsUnder(readStore: ReadStore, provider: string, applications: InboundApplications, connections: readonly ConnectionDoc[]): Promise<ConnectionDoc[]> {
  const viaInstance = applications.instance ? [...new Set(connections.filter((c) => c.application === 'instance').map((c) => c.tenant_id))] : [];
  const withOwnKeys = new Set<string>();
  for (let i = 0; i < viaInstance.length; i += IDS_PER_QUERY) {
    const docs = await readStore.find<ProviderKeysDoc>(PROVIDER_KEYS, { filter: { provider, tenant_id: { $in: viaInstance.slice(i, i + IDS_PER_QUERY) } } });
    for (const d of docs) withOwnKeys.add(d.tenant_id);
  }
  return connections.filter((c) =>
    c.application === 'instance' ? applications.instance && !withOwnKeys.has(c.tenant_id) : applications.tenants.get(c.tenant_id) === c.application,
  );
}
