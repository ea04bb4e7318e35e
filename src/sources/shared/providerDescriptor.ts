/**
 * What the service knows about a provider it connects to over OAuth 2.0 (kind `oauth`) or that
 * pushes to it (kind `push`): the addresses its documentation gives, how its consent screen
 * takes scopes, which record families (consent categories, contracts §7) each scope covers, and
 * the provider's own rules for a tenant's keys. Decoding of payloads lives beside each
 * descriptor in src/sources/providers/<slug>/.
 */
export type ConsentCategory = 'activity' | 'heart' | 'sleep' | 'body' | 'workouts' | 'nutrition' | 'cycle' | 'profile';

export type ProviderKeySpec = { name: string; required: boolean; secret: boolean };

/** An address the provider documents: the real origin and the path kept when `<SLUG>_BASE_URL` replaces the origin. */
export type ProviderAddress = { origin: string; path: string };

export type OAuthDescriptor = {
  authorize: ProviderAddress;
  token: ProviderAddress;
  /** Where a grant is revoked, when the provider offers it (best effort on disconnect). */
  revoke: (ProviderAddress & { method: 'POST' | 'DELETE' }) | null;
  /** RFC 7636 with S256, where the provider supports it. */
  pkce: boolean;
  /** How scopes are joined in the authorize URL (space per RFC 6749; some providers use commas). */
  scopeSeparator: ' ' | ',';
  /** Scopes asked for, each with the consent categories it covers. */
  scopes: Readonly<Record<string, readonly ConsentCategory[]>>;
  /** How the client authenticates at the token endpoint. */
  clientAuth: 'basic' | 'body';
};

export type ProviderDescriptor = {
  slug: string;
  name: string;
  kind: 'oauth' | 'push';
  /** Data types the connector reads from the provider (GET /v1/providers `data_types`). */
  dataTypes: readonly string[];
  keys: readonly ProviderKeySpec[];
  /** The provider's own rules for its keys; answers the reason a value is refused, or null. */
  validateKeys: (keys: Readonly<Record<string, string>>) => string | null;
  oauth: OAuthDescriptor;
};

export const CLIENT_KEYS: readonly ProviderKeySpec[] = [
  { name: 'CLIENT_ID', required: true, secret: false },
  { name: 'CLIENT_SECRET', required: true, secret: true },
];

/** The rule every provider shares: printable values without spaces (they travel in URLs and Basic auth). */
export function plainValue(name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  if (value.length > 512) return `${name} is longer than 512 characters`;
  if (!/^[\x21-\x7e]+$/.test(value)) return `${name} must be printable ASCII without spaces`;
  return null;
}

export function firstReason(...reasons: (string | null)[]): string | null {
  return reasons.find((r) => r !== null) ?? null;
}

/** The shared rules for CLIENT_ID and CLIENT_SECRET, then the provider's own (`extra`), first reason wins. */
export function clientKeysReason(keys: Readonly<Record<string, string>>, ...extra: (string | null)[]): string | null {
  return firstReason(plainValue('CLIENT_ID', keys.CLIENT_ID), plainValue('CLIENT_SECRET', keys.CLIENT_SECRET), ...extra);
}
