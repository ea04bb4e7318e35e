import type { ValueSealer } from '../../src/crypto/sealedValue.js';
import type { ProviderSettings } from '../../src/catalog/providerFacts.js';
import { FILE_FORMATS } from '../../src/catalog/formats.js';
import { CONNECTED_PROVIDERS } from '../../src/catalog/providers.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { resolveProviderClient } from './providerKeys.js';

export type ProviderEntry = { slug: string; name: string; kind: 'oauth' | 'push' | 'device' | 'import'; enabled: boolean; data_types: string[] };

/**
 * GET /v1/providers (contracts §7): every connector of this build. An oauth or push provider is
 * enabled for the tenant when the tenant has its own working keys or the instance has
 * `<SLUG>_CLIENT_ID` and `<SLUG>_CLIENT_SECRET`; device providers need no keys.
 */
export async function listProviders(readStore: ReadStore, sealer: ValueSealer, settings: Record<string, ProviderSettings>, tenantId: string): Promise<ProviderEntry[]> {
  const out: ProviderEntry[] = [];
  for (const p of CONNECTED_PROVIDERS) {
    const client = await resolveProviderClient(readStore, sealer, settings, tenantId, p.slug);
    out.push({ slug: p.slug, name: p.name, kind: p.kind, enabled: client !== null, data_types: [...p.dataTypes] });
  }
  // Device providers take uploads of one export format each (README "Device uploads").
  for (const f of FILE_FORMATS) out.push({ slug: f.slug, name: f.name, kind: f.kind, enabled: true, data_types: ['upload'] });
  return out;
}
