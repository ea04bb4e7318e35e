import type { ProviderAddress } from './providerDescriptor.js';

/** `oura` → `OURA`: the prefix of a provider's settings (`OURA_CLIENT_ID`, `OURA_BASE_URL`). */
export const settingPrefix = (slug: string) => slug.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/**
 * The address to call: `<SLUG>_BASE_URL` replaces scheme, host and port and keeps the
 * documented path (contracts §7); unset, the provider's real address.
 */
export function providerUrl(address: ProviderAddress, baseUrl: string | undefined): URL {
  const origin = baseUrl ? baseUrl.replace(/\/+$/, '') : address.origin;
  return new URL(address.path, origin + '/');
}
