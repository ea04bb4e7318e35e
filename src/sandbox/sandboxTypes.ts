/**
 * The types the sandbox's server (sandboxServer.ts) and its providers' data handlers (data/) share:
 * the handlers need them, the server needs the handlers, so they live in neither.
 */
/** An authorisation code; it expires `expiresAt` (ten minutes after it was issued, as RFC 6749 §4.1.2 recommends and the providers do). */
export type Grant = { provider: string; code: string; redirectUri: string; challenge: string | null; scope: string; used: boolean; user: string; expiresAt: number };
export type IssuedToken = { provider: string; access: string; refresh: string; scope: string; expiresAt: number; revoked: boolean; user: string };

/**
 * A provider's data API in the sandbox (src/sandbox/data/<slug>.ts). `token.user` is the sandbox
 * user the grant belongs to: handlers answer that user's data, generated deterministically from
 * it, so every pull of the same window answers the same records. A handler answers null for a
 * path it does not serve (404). `headers` are added to the answer (Link, rate-limit headers).
 */
export type DataHandler = (ctx: {
  method: string;
  path: string;
  query: URLSearchParams;
  form: URLSearchParams;
  /** The parsed body of a request sent as application/json (Polar's user registration); null otherwise. */
  json?: unknown;
  token: IssuedToken;
  now: Date;
  /** Where a push provider sends its notifications (the address a partner registers in its portal), once registered. */
  pushUrl: string | null;
}) => DataAnswer | null | Promise<DataAnswer | null>;

/** A data endpoint's answer; a handler may take its time (a slow provider in a test) and answer a promise. */
export type DataAnswer = { status: number; body: unknown; headers?: Record<string, string> };
