import { FILE_FORMATS } from './formats.js';
import type { ProviderKind } from './providerFacts.js';
import { CONNECTED_PROVIDERS } from './providers.js';

/** Every slug the contract names (contracts §7) with its kind: the connected providers, then the file formats. */
export const PROVIDER_KINDS: Readonly<Record<string, ProviderKind>> = Object.fromEntries([
  ...CONNECTED_PROVIDERS.map((p) => [p.slug, p.kind] as const),
  ...FILE_FORMATS.map((f) => [f.slug, f.kind] as const),
]);

export function providerKind(slug: string): ProviderKind | null {
  return Object.hasOwn(PROVIDER_KINDS, slug) ? PROVIDER_KINDS[slug]! : null;
}
