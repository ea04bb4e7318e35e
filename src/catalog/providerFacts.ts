/**
 * The shape of the source catalog (src/catalog/providers.ts, formats.ts): what the domain knows of
 * each provider, as data. How to talk to a provider (its addresses, paging, decoders) is not here:
 * that lives in its folder under src/sources/providers/<slug>/.
 */

/** The record families a consent covers (contracts §7). */
export type ConsentCategory = 'activity' | 'heart' | 'sleep' | 'body' | 'workouts' | 'nutrition' | 'cycle' | 'profile';

/**
 * How each provider works (spec "What the service does" 3, contracts §7): `oauth` (the service
 * pulls after the user's consent), `push` (the provider notifies the service), `device` (an SDK on
 * the user's device uploads a file of one format).
 */
export type ProviderKind = 'oauth' | 'push' | 'device' | 'import';

export type ProviderKeySpec = { name: string; required: boolean; secret: boolean };

/** A provider the service connects to over OAuth 2.0 (kind `oauth`) or that pushes to it (kind `push`). */
export type ProviderFacts = {
  slug: string;
  name: string;
  kind: 'oauth' | 'push';
  /** Data types the connector reads from the provider (GET /v1/providers `data_types`). */
  dataTypes: readonly string[];
  keys: readonly ProviderKeySpec[];
  /** The provider's own rules for its keys; answers the reason a value is refused, or null. */
  validateKeys: (keys: Readonly<Record<string, string>>) => string | null;
  oauth: {
    /** Scopes asked for, each with the consent categories it covers. */
    scopes: Readonly<Record<string, readonly ConsentCategory[]>>;
    /** RFC 7636 with S256, where the provider supports it: the consent state then keeps a verifier. */
    pkce: boolean;
  };
  /**
   * The path of the instance's address for the provider's webhooks (docs/connections.md "Provider
   * webhooks"); absent: `/inbound/<slug>`, where a push provider sends. Strava and Withings sign
   * nothing: their address ends with the application's webhook token, `<path>/<token>`, as
   * Garmin's push address ends with its inbound secret.
   */
  webhookPath?: string;
  /**
   * How far back a first backfill can reach, in days, as the provider documents it (GET
   * /v1/providers `history_days`); null where the provider documents no limit. A backfill asked to
   * reach further stops here and its sync run says so (docs/connections.md "History").
   */
  historyDays: number | null;
  /** What a tenant should know before enabling the provider (its terms, its programme), in one or two sentences; null when nothing. */
  notes: string | null;
  /**
   * Set once the provider's API is turned down (contracts §14): since when, and the provider that
   * serves its users now (null when none does). Connecting is refused; a pull answered 410 sends
   * the connection back to its user.
   */
  retirement?: { since: string; successor: string | null };
};

/**
 * An instance's own settings for an oauth or push provider (README "Configuration", read by
 * src/config.ts): `<SLUG>_CLIENT_ID`, `<SLUG>_CLIENT_SECRET` (used when a tenant has no keys of
 * its own) and `<SLUG>_BASE_URL`, which replaces the origin of every address of the provider
 * (contracts §7).
 */
export type ProviderSettings = {
  clientId?: string;
  clientSecret?: string;
  baseUrl?: string;
  /** Push providers: the secret path segment of the instance's inbound address (`<SLUG>_INBOUND_SECRET`, docs/connectors/garmin.md). */
  inboundSecret?: string;
  /** Fitbit: the subscriber verification code its developer console shows (`FITBIT_SUBSCRIBER_VERIFICATION_CODE`, docs/connections.md "Provider webhooks"). */
  subscriberVerificationCode?: string;
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
