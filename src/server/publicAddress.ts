import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

/**
 * The service's public address, for absolute links (FHIR Bundle links) and origin checks (/mcp).
 * PUBLIC_BASE_URL when it is set: behind a proxy the Host a request names may lack the port or be
 * an internal name, and a page served by a rebound DNS name names its own host. Unset, the address
 * the request came to, as a trusted proxy reports it (TRUST_PROXY; docs/decisions.md).
 */
type AddressConfig = Pick<Config, 'publicBaseUrl' | 'publicBaseUrlConfigured'>;

export function publicBaseOf(config: AddressConfig, request: FastifyRequest): string {
  return config.publicBaseUrlConfigured ? config.publicBaseUrl : `${request.protocol}://${request.host}`;
}

/**
 * A `Location` the service hands out for `path` (contracts §17): absolute at PUBLIC_BASE_URL, its
 * path included (a service published at `https://example.org/health`), when one is set; unset,
 * the path alone, which the client resolves against the address it called (a Host or scheme
 * guessed behind a proxy could send it elsewhere).
 */
export function publicLocation(config: AddressConfig, path: string): string {
  return config.publicBaseUrlConfigured ? `${config.publicBaseUrl}${path}` : path;
}

/** Whether a browser's Origin header names the service itself. */
export function isOwnOrigin(config: AddressConfig, request: FastifyRequest, origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return config.publicBaseUrlConfigured ? url.origin === new URL(config.publicBaseUrl).origin : url.host === request.host;
}
