import { fitbit } from '../providers/fitbit/provider.js';
import { garmin } from '../providers/garmin/provider.js';
import { oura } from '../providers/oura/provider.js';
import { polar } from '../providers/polar/provider.js';
import type { ProviderAddress, ProviderDescriptor } from './providerDescriptor.js';
import { strava } from '../providers/strava/provider.js';
import { whoop } from '../providers/whoop/provider.js';
import { withings } from '../providers/withings/provider.js';

/** The oauth and push providers of this build (contracts §7), in the order GET /v1/providers lists them. */
export const CONNECTED_PROVIDERS: readonly ProviderDescriptor[] = [oura, whoop, withings, polar, fitbit, strava, garmin];

const bySlug = new Map(CONNECTED_PROVIDERS.map((p) => [p.slug, p]));

export function connectedProvider(slug: string): ProviderDescriptor | null {
  return bySlug.get(slug) ?? null;
}

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
