import { PROVIDER_KEY_PURPOSE, providerKeyOwner } from '../../commands/connections/providerKeys.js';
import { PROVIDER_KEYS, providerKeysDocId, type ProviderKeysDoc } from '../../projections/connections/providerKeysProjection.js';
import type { ProviderSettings } from '../../src/catalog/providerFacts.js';
import { connectedProvider } from '../../src/catalog/providers.js';
import { openValue, type ValueSealer } from '../../src/crypto/sealedValue.js';
import type { ReadStore } from '../../src/readstore/readStore.js';

/** The Tenant provider keys resource (spec), without values. */
export type ProviderKeysResource = {
  provider: string;
  set: boolean;
  status: 'active' | 'error' | 'not_set';
  error: string | null;
  client_id: string | null;
  keys: { name: string; required: boolean; secret: boolean; set: boolean }[];
  urls: { redirect: string; inbound: string };
  created_at: string | null;
  updated_at: string | null;
  updated_by: string | null;
};

/**
 * The instance's addresses to register at the provider, the same for every tenant: `inbound` is
 * where the provider sends its webhooks (a pull provider's) or pushes (Garmin's).
 */
export function instanceUrls(publicBaseUrl: string, provider: string) {
  return { redirect: `${publicBaseUrl}/oauth/${provider}/callback`, inbound: `${publicBaseUrl}${connectedProvider(provider)?.webhookPath ?? `/inbound/${provider}`}` };
}

/** The tenant's keys opened with the configured sealing key; a value that no longer opens makes the keys `error`. */
export async function openTenantKeys(
  readStore: ReadStore,
  sealer: ValueSealer,
  tenantId: string,
  provider: string,
): Promise<{ doc: ProviderKeysDoc; values: Record<string, string> | null; error: string | null } | null> {
  const doc = await readStore.get<ProviderKeysDoc>(PROVIDER_KEYS, providerKeysDocId(tenantId, provider));
  if (!doc) return null;
  try {
    const values: Record<string, string> = {};
    for (const [name, sealed] of Object.entries(doc.sealed_values)) values[name] = openValue(sealer, PROVIDER_KEY_PURPOSE, providerKeyOwner(tenantId, provider, name), sealed);
    return { doc, values, error: null };
  } catch {
    return { doc, values: null, error: 'the stored keys no longer open with the configured SEALING_KEY; set them again or remove them' };
  }
}

export async function getProviderKeys(readStore: ReadStore, sealer: ValueSealer, publicBaseUrl: string, tenantId: string, provider: string): Promise<ProviderKeysResource | null> {
  const descriptor = connectedProvider(provider);
  if (!descriptor) return null;
  const opened = await openTenantKeys(readStore, sealer, tenantId, provider);
  const doc = opened?.doc;
  return {
    provider,
    set: !!doc,
    status: !opened ? 'not_set' : opened.error ? 'error' : 'active',
    error: opened?.error ?? null,
    client_id: doc?.client_id_masked ?? null,
    keys: descriptor.keys.map((k) => ({ name: k.name, required: k.required, secret: k.secret, set: !!doc && Object.hasOwn(doc.sealed_values, k.name) })),
    urls: instanceUrls(publicBaseUrl, provider),
    created_at: doc?.created_at ?? null,
    updated_at: doc?.updated_at ?? null,
    updated_by: doc?.updated_by ?? null,
  };
}

/** The client a tenant connects a provider with: its own keys when set, else the instance's. */
export type ProviderClient = { clientId: string; clientSecret: string; application: string; values: Record<string, string>; baseUrl: string | undefined };

/**
 * Null when the provider is not enabled for the tenant: keys neither the tenant's nor the
 * instance's, or the tenant's keys in `error` (spec: the tenant cannot connect until they are set
 * again or removed).
 */
export async function resolveProviderClient(
  readStore: ReadStore,
  sealer: ValueSealer,
  settings: Record<string, ProviderSettings>,
  tenantId: string,
  provider: string,
): Promise<ProviderClient | null> {
  const instance = settings[provider] ?? {};
  const opened = await openTenantKeys(readStore, sealer, tenantId, provider);
  if (opened) {
    if (!opened.values) return null;
    return { clientId: opened.values.CLIENT_ID!, clientSecret: opened.values.CLIENT_SECRET!, application: opened.doc.application, values: opened.values, baseUrl: instance.baseUrl };
  }
  if (!instance.clientId || !instance.clientSecret) return null;
  return { clientId: instance.clientId, clientSecret: instance.clientSecret, application: 'instance', values: { CLIENT_ID: instance.clientId, CLIENT_SECRET: instance.clientSecret }, baseUrl: instance.baseUrl };
}
