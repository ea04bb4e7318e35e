import { randomBytes } from 'node:crypto';
import { parse, serialize } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSENT_STATE_TTL_MS } from '../../commands/connections/connection.js';
import { instanceUrls } from '../../queries/connections/providerKeys.js';

/**
 * The cookie that binds a consent state to the browser that started the flow (RFC 6749 §10.12;
 * docs/connections.md "Consent flow"). One per state, so that flows running side by side in one
 * browser never overwrite each other's; it lives as long as the state, is sent only to the
 * provider's `/oauth/{provider}/` addresses, never to scripts (HttpOnly), and on the provider's
 * top-level redirect back to the callback (SameSite=Lax).
 */
const PREFIX = 'wellstream_consent_';
const VALUE = /^[A-Za-z0-9_-]{43}$/;

export const consentCookieName = (stateHash: string) => `${PREFIX}${stateHash.slice(0, 16)}`;

/** A fresh random value for a new binding (256 bits). */
export const newConsentCookieValue = () => randomBytes(32).toString('base64url');

/** The public path the provider's start and callback addresses share (PUBLIC_BASE_URL may carry a path). */
function cookiePath(publicBaseUrl: string, provider: string): string {
  return new URL(instanceUrls(publicBaseUrl, provider).redirect).pathname.replace(/callback$/, '');
}

/** The value the browser brought for this state; null when absent or not one the service could have set. */
export function readConsentCookie(request: FastifyRequest, stateHash: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  const value = parse(header)[consentCookieName(stateHash)];
  return value !== undefined && VALUE.test(value) ? value : null;
}

export function setConsentCookie(reply: FastifyReply, publicBaseUrl: string, provider: string, stateHash: string, value: string | null): void {
  reply.header(
    'set-cookie',
    serialize(consentCookieName(stateHash), value ?? '', {
      path: cookiePath(publicBaseUrl, provider),
      maxAge: value === null ? 0 : CONSENT_STATE_TTL_MS / 1000,
      httpOnly: true,
      sameSite: 'lax',
      secure: new URL(publicBaseUrl).protocol === 'https:',
    }),
  );
}
