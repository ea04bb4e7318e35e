import type { ValueSealer } from '../../src/crypto/sealedValue.js';
import type { ProviderSettings } from '../../src/config.js';
import { CONNECTED_PROVIDERS } from '../../src/sources/shared/providers.js';
import { PROVIDER_KINDS } from '../../src/catalog/providerKinds.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { resolveProviderClient } from './providerKeys.js';

/** Device providers take uploads of one export format each (README "Device uploads"). */
const DEVICE_NAMES: Record<string, string> = { 'device-a': 'Apple HealthKit export', 'device-b': 'Health Connect export', 'device-c': 'Gadgetbridge export' };

export type ProviderEntry = { slug: string; name: string; kind: 'oauth' | 'push' | 'device'; enabled: boolean; data_types: string[] };

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
  for (const [slug, kind] of Object.entries(PROVIDER_KINDS)) {
    if (kind !== 'device') continue;
    out.push({ slug, name: DEVICE_NAMES[slug] ?? slug, kind, enabled: true, data_types: ['upload'] });
  }
  return out;
}
