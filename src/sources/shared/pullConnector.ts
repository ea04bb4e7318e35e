import type { DeviceParser } from '../../../commands/ingestion/records.js';
import type { ProviderDescriptor } from './providerDescriptor.js';

/**
 * The seam between the sync engine (src/processes/sync/) and each provider's connector
 * (src/sources/providers/<slug>/). The engine owns everything providers share: tokens (refreshed
 * before expiry), the run's window, storing each payload unchanged in the raw payload store
 * (sealed, registered with the user's data of the provider, then normalised by the ETL), retries,
 * rate limits, leases and run states. A connector owns only what differs between providers:
 * which requests a window needs, how the provider pages, and how its payloads decode.
 */

/** The half-open window a run pulls: every record whose time falls in [start, end). */
export type PullWindow = { start: Date; end: Date };

export type ProviderRequest = {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The documented path, e.g. `/v2/usercollection/heartrate`; `<SLUG>_BASE_URL` replaces the origin. */
  path: string;
  query?: Record<string, string>;
  /** A form body (Withings' POST actions); sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  /** A JSON body (Polar's user registration); sent as application/json. */
  json?: unknown;
  /** Absolute `next` links some providers answer with; used instead of path + query when set. */
  url?: string;
  /** Which of the provider's documented origins the path belongs to, when it has several (Polar, Oura). Default `data`. */
  origin?: string;
};

export type ProviderAnswer = { status: number; headers: Headers; body: Buffer; json<T = unknown>(): T };

/**
 * Calls the provider's data API with the connection's current access token. A refusal (401,
 * invalid_token), a 429 and a 5xx or time-out are thrown as `ProviderCallError` (src/sources/shared/
 * oauthClient.ts) with kinds `refused`, `rate_limited` (with Retry-After) and `unavailable`; the
 * engine turns them into `needs_reauth`, `rate_limited` and `retrying`. 204 and other 2xx answers
 * come back. A 404 comes back too (a connector decides whether "no data" is an error).
 */
export type ProviderHttp = (request: ProviderRequest) => Promise<ProviderAnswer>;

/** One provider answer kept as sent: the raw payload store holds `body` unchanged. */
export type PulledPayload = {
  /** One of the descriptor's `dataTypes`: picks the decoder (ParseContext.dataType). */
  dataType: string;
  body: Buffer;
  contentType: string;
  /**
   * What the payload answers (path and query, or the provider's object id): with the body's
   * digest it names the stored payload, so a retried run stores nothing twice.
   */
  ref: string;
};

export type PullContext = {
  window: PullWindow;
  /** What queued the run (Sync run `trigger`). */
  trigger: 'backfill' | 'scheduled' | 'notification' | 'manual';
  /** Set when a notification named the single data type to pull (Sync run `data_type`). */
  dataType: string | null;
  http: ProviderHttp;
  /** The provider's id of the user, when its token answer or API gives one (Withings userid, Strava athlete id, Polar x_user_id). */
  providerUserId: string | null;
  /** Scopes the user granted (a connector skips data types the grant does not cover). */
  scopes: readonly string[];
  signal: AbortSignal;
};

/**
 * Providers whose token answer does not name the user, but whose pushes or webhooks do, read the
 * provider's id of the user with one call after the code exchange: Garmin names users by it in
 * every push (required: the consent fails without it), Oura and WHOOP in their webhooks (best
 * effort: null when the call is refused, and the connection is then pulled on its schedule only).
 */
export type ReadProviderUserId = (o: { baseUrl: string | undefined; accessToken: string }) => Promise<string | null>;

/**
 * Ends the user's registration with the application at the provider, for providers where a
 * revoked token is not the end of it (Polar AccessLink keeps a registered user until the
 * application deletes it). Called on disconnect and on the user's deletion, before the grant is
 * revoked, with the connection's last access token; best effort: answers whether the provider
 * confirmed it, never throws.
 */
export type DeregisterUser = (o: { baseUrl: string | undefined; accessToken: string; providerUserId: string | null }) => Promise<boolean>;

export interface PullConnector {
  descriptor: ProviderDescriptor;
  readUserId?: ReadProviderUserId;
  deregister?: DeregisterUser;
  /** The data API's documented origins by name, `data` first (`ProviderRequest.origin`); `<SLUG>_BASE_URL` replaces them all. */
  origins: Readonly<Record<string, string>>;
  /**
   * Yields every payload the window needs, page by page, in an order that lets the engine store
   * each before asking for the next (a crash mid-run loses at most the page in flight; the
   * retry starts the window again and stored pages replay as no-ops).
   */
  pull(ctx: PullContext): AsyncIterable<PulledPayload>;
  /**
   * Called after every yielded payload is stored: providers with transactional pulls (Polar
   * AccessLink commits a transaction so the data is not offered again) acknowledge here.
   */
  acknowledge?(ctx: PullContext): Promise<void>;
  /** Decodes this provider's stored payloads into records; `ctx.dataType` says which payload it is. */
  parser: DeviceParser;
}

/** One user's part of an inbound push (Garmin Health API): the provider's user id names the connection. */
export type PushedPayload = PulledPayload & { providerUserId: string };

export interface PushConnector {
  descriptor: ProviderDescriptor;
  readUserId?: ReadProviderUserId;
  deregister?: DeregisterUser;
  /**
   * Splits one inbound request (already authenticated by the route) into each user's payloads,
   * every one kept unchanged in meaning. Throws a DomainError('invalid', …) for a body the
   * provider's documentation does not allow.
   */
  receive(request: { path: string; headers: Record<string, string | string[] | undefined>; body: Buffer }): PushedPayload[];
  parser: DeviceParser;
  /**
   * A push provider sends only what is new. When it can be asked to push a window's history
   * (Garmin's Backfill API), the sync engine's backfill run (on connect) calls this: the provider
   * answers at once and pushes the history later through the inbound route, so the run stores
   * nothing itself. Its refusals are ProviderCallErrors, as a pull's.
   */
  history?: { origins: Readonly<Record<string, string>>; request(ctx: PullContext): Promise<void> };
}
