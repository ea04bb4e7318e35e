/**
 * How each provider works (spec "What the service does" 3, contracts §7): `oauth` (the service
 * pulls after the user's consent), `push` (the provider notifies the service), `device` (an SDK on
 * the user's device uploads). One table for every slug the contract names; the device slugs are
 * also the upload routes' (src/sources/files/index.ts).
 */
export type ProviderKind = 'oauth' | 'push' | 'device';

export const PROVIDER_KINDS: Readonly<Record<string, ProviderKind>> = {
  oura: 'oauth',
  whoop: 'oauth',
  withings: 'oauth',
  polar: 'oauth',
  fitbit: 'oauth',
  strava: 'oauth',
  garmin: 'push',
  'device-a': 'device',
  'device-b': 'device',
  'device-c': 'device',
};

export function providerKind(slug: string): ProviderKind | null {
  return Object.hasOwn(PROVIDER_KINDS, slug) ? PROVIDER_KINDS[slug]! : null;
}
