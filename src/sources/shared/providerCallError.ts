import { parseRetryAfter } from '../../shared/retryAfter.js';
import type { ProviderDescriptor } from './providerDescriptor.js';

/**
 * How a provider refused: `refused` (invalid_grant, invalid_client, 401, 403: the user must consent
 * again), `rate_limited` (429, with the provider's Retry-After), `unavailable` (5xx, time-out,
 * refused connection: try again later), `rejected` (another 4xx, or a call the service itself
 * refuses: an address off the provider's origins, a private address, a redirect, an answer over
 * the size cap; asking again or asking the user changes nothing; the run fails, the connection
 * stays), `retired` (410 Gone: the provider turned its API down; the user must move to the provider
 * that serves them now, contracts §14).
 */
export class ProviderCallError extends Error {
  override name = 'ProviderCallError';
  constructor(
    readonly kind: 'refused' | 'rate_limited' | 'unavailable' | 'rejected' | 'retired',
    message: string,
    readonly retryAfterSeconds: number | null = null,
    /** The provider's HTTP status, when it answered one. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

export const PROVIDER_CALL_TIMEOUT_MS = 15_000;

const GRANT_ERRORS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client', 'invalid_token', 'access_denied']);

/** How long a provider's 429 asks to wait when it does not say (seconds). */
export const DEFAULT_RATE_LIMIT_WAIT_SECONDS = 60;

/**
 * Classes a provider's answer that is not 2xx. A 3xx is `rejected` like another 4xx: redirects are
 * not followed (an address the answer names is not one the code chose), and the documented APIs
 * answer in place.
 */
export function throwForStatus(p: Pick<ProviderDescriptor, 'name'>, res: { status: number; statusText: string; headers: Headers }, json: Record<string, unknown>, nowMs = Date.now()): void {
  if (res.status >= 200 && res.status < 300) return;
  const detail = String(json.error_description ?? json.error ?? json.message ?? res.statusText).slice(0, 200);
  if (res.status === 429) {
    // Unbounded here; the sync engine caps how long a run waits (syncSchedule.ts rateLimitWaitMs).
    const retry = parseRetryAfter(res.headers.get('retry-after'), nowMs);
    throw new ProviderCallError('rate_limited', `${p.name} rate limit: ${detail}`, retry ?? DEFAULT_RATE_LIMIT_WAIT_SECONDS, 429);
  }
  if (res.status === 410) throw new ProviderCallError('retired', `${p.name} answered 410 Gone: ${detail}`, null, 410);
  if (res.status >= 500) throw new ProviderCallError('unavailable', `${p.name} answered ${res.status}: ${detail}`, null, res.status);
  // RFC 6749 §5.2: a token endpoint answers a dead grant with 400 and one of these codes.
  if (res.status === 401 || res.status === 403 || GRANT_ERRORS.has(String(json.error ?? ''))) throw new ProviderCallError('refused', `${p.name} refused (${res.status}): ${detail}`, null, res.status);
  throw new ProviderCallError('rejected', `${p.name} rejected the request (${res.status}): ${detail}`, null, res.status);
}
