import { describe, expect, it } from 'vitest';
import { fitbit } from '../../../src/sources/providers/fitbit/provider.js';
import { ProviderCallError, throwForStatus } from '../../../src/sources/shared/providerCallError.js';
import { MAX_RATE_LIMIT_WAIT_MS, rateLimitWaitMs } from '../../../commands/sync/syncSchedule.js';

/** Issue 20, finding 6: a provider's Retry-After is read in both of its forms and a run waits at most a day. */
const NOW = Date.parse('2026-11-23T10:00:00.000Z');

function retryAfterOf(value: string | null): number | null {
  const headers = new Headers(value === null ? {} : { 'retry-after': value });
  try {
    throwForStatus(fitbit, { status: 429, statusText: 'Too Many Requests', headers }, {}, NOW);
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderCallError);
    expect(err).toMatchObject({ kind: 'rate_limited', status: 429 });
    return (err as ProviderCallError).retryAfterSeconds;
  }
  throw new Error('a 429 was not classed');
}

describe('Retry-After of a provider’s 429 (RFC 9110 §10.2.3)', () => {
  it('reads delta-seconds and an HTTP date; 60 s when absent or unreadable', () => {
    expect(retryAfterOf('120')).toBe(120);
    expect(retryAfterOf('Mon, 23 Nov 2026 10:05:00 GMT')).toBe(300);
    expect(retryAfterOf('Mon, 23 Nov 2026 09:00:00 GMT')).toBe(0);
    expect(retryAfterOf(null)).toBe(60);
    expect(retryAfterOf('soon')).toBe(60);
  });
});

describe('the wait of a rate-limited run (rateLimitWaitMs)', () => {
  it('is what the provider asked, at least a second, and never more than a day', () => {
    expect(MAX_RATE_LIMIT_WAIT_MS).toBe(86_400_000);
    expect(rateLimitWaitMs(120)).toBe(120_000);
    expect(rateLimitWaitMs(0)).toBe(1_000);
    expect(rateLimitWaitMs(null)).toBe(60_000);
    expect(rateLimitWaitMs(1e9)).toBe(MAX_RATE_LIMIT_WAIT_MS);
    expect(rateLimitWaitMs(retryAfterOf('Fri, 31 Dec 9999 23:59:59 GMT'))).toBe(MAX_RATE_LIMIT_WAIT_MS);
    expect(rateLimitWaitMs(Number.POSITIVE_INFINITY)).toBe(MAX_RATE_LIMIT_WAIT_MS);
    expect(rateLimitWaitMs(-5)).toBe(1_000);
  });
});
