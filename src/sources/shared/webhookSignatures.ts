import { createHmac, timingSafeEqual } from 'node:crypto';

/** Constant-time check of a provider's HMAC signature (`given`, in the provider's encoding) over `message`. */
export function hmacMatches(o: { algorithm: 'sha1' | 'sha256'; key: string; message: Buffer; given: string; encoding: 'base64' | 'hex' }): boolean {
  const expected = createHmac(o.algorithm, o.key).update(o.message).digest();
  const given = o.encoding === 'hex' ? (/^[0-9a-fA-F]+$/.test(o.given) ? Buffer.from(o.given, 'hex') : Buffer.alloc(0)) : Buffer.from(o.given.trim(), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Constant-time equality of two strings (digests first, as their lengths may differ). */
export function sameText(a: string, b: string): boolean {
  const da = createHmac('sha256', 'compare').update(a).digest();
  const db = createHmac('sha256', 'compare').update(b).digest();
  return timingSafeEqual(da, db);
}

/**
 * The token an application's webhook address (Strava, Withings: they sign nothing) or handshake
 * (Strava's `hub.verify_token`, Oura's `verification_token`) carries: derived from the
 * application's client secret, so the service needs no setting of its own and each application
 * has its own, which changes when the secret does. docs/connections.md "Provider webhooks" shows
 * how to compute it.
 */
export function webhookToken(provider: string, clientSecret: string): string {
  return createHmac('sha256', clientSecret).update(`webhook:${provider}`).digest('base64url').slice(0, 32);
}

/** How far a signed timestamp (Oura, WHOOP) may be from the clock: the usual 5 minutes of webhook signing schemes. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

/**
 * A signature timestamp header as milliseconds: Unix seconds or milliseconds (WHOOP sends
 * milliseconds; a number below 10¹¹ is read as seconds, which covers both until the year 5138).
 * Null when it is not a plain non-negative integer.
 */
export function signatureTime(header: string): number | null {
  if (!/^\d{1,16}$/.test(header)) return null;
  const n = Number(header);
  return n < 1e11 ? n * 1000 : n;
}
