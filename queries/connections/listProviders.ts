import type { ValueSealer } from '../../src/crypto/sealedValue.js';
import type { ProviderSettings } from '../../src/catalog/providerFacts.js';
import { FILE_FORMATS } from '../../src/catalog/formats.js';
import { CONNECTED_PROVIDERS } from '../../src/catalog/providers.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { resolveProviderClient } from './providerKeys.js';

export type ProviderEntry = {
  slug: string;
  name: string;
  kind: 'oauth' | 'push' | 'device' | 'import';
  enabled: boolean;
  data_types: string[];
  retired: boolean;
  successor: string | null;
  history_days: number | null;
  notes: string | null;
};

/**
 * GET /v1/providers (contracts §7): every connector of this build. An oauth or push provider is
 * enabled for the tenant when the tenant has its own working keys or the instance has
 * `<SLUG>_CLIENT_ID` and `<SLUG>_CLIENT_SECRET`; device providers need no keys. Every entry says
 * whether the provider is retired and which provider serves its users now (contracts §14), how far
 * back a first backfill reaches and what a tenant should know (issue 22).
 */
export async function listProviders(readStore: ReadStore, sealer: ValueSealer, settings: Record<string, ProviderSettings>, tenantId: string): Promise<ProviderEntry[]> {
  const out: ProviderEntry[] = [];
  for (const p of CONNECTED_PROVIDERS) {
    const client = await resolveProviderClient(readStore, sealer, settings, tenantId, p.slug);
    out.push({
      slug: p.slug,
      name: p.name,
      kind: p.kind,
      enabled: client !== null,
      data_types: [...p.dataTypes],
      retired: p.retirement !== undefined,
      successor: p.retirement?.successor ?? null,
      history_days: p.historyDays,
      notes: p.notes,
    });
  }
  // Device providers take uploads of one export format each (README "Device uploads").
  // An upload carries whatever history its file holds: no reach to state.
  for (const f of FILE_FORMATS) out.push({ slug: f.slug, name: f.name, kind: f.kind, enabled: true, data_types: ['upload'], retired: false, successor: null, history_days: null, notes: null });
  return out;
}
