import type { ProviderFacts } from '../../catalog/providerFacts.js';

/**
 * How the service talks to a provider it connects to over OAuth 2.0 (kind `oauth`) or that
 * pushes to it (kind `push`): its catalog row (src/catalog/providers.ts: name, data types, keys,
 * scopes and their consent categories) with the addresses its documentation gives and how its
 * consent screen and token endpoint take a request. Decoding of payloads lives beside each
 * descriptor in src/sources/providers/<slug>/.
 */

/** An address the provider documents: the real origin and the path kept when `<SLUG>_BASE_URL` replaces the origin. */
export type ProviderAddress = { origin: string; path: string };

export type OAuthEndpoints = {
  authorize: ProviderAddress;
  token: ProviderAddress;
  /** Where a grant is revoked, when the provider offers it (best effort on disconnect). */
  revoke: (ProviderAddress & { method: 'POST' | 'DELETE' }) | null;
  /** How scopes are joined in the authorize URL (space per RFC 6749; some providers use commas). */
  scopeSeparator: ' ' | ',';
  /** How the client authenticates at the token endpoint. */
  clientAuth: 'basic' | 'body';
  /** Parameters the provider's authorisation page needs besides RFC 6749's (Google: access_type=offline for a refresh token). */
  authorizeParams?: Readonly<Record<string, string>>;
};

export type OAuthDescriptor = ProviderFacts['oauth'] & OAuthEndpoints;

export type ProviderDescriptor = Omit<ProviderFacts, 'oauth'> & { oauth: OAuthDescriptor };

/** A provider's catalog row with its OAuth endpoints. */
export function describeProvider<F extends ProviderFacts>(facts: F, endpoints: OAuthEndpoints): Omit<F, 'oauth'> & { oauth: F['oauth'] & OAuthEndpoints } {
  return { ...facts, oauth: { ...facts.oauth, ...endpoints } };
}
