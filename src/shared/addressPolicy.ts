import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses an outgoing call may connect to (SSRF guard), shared by webhook deliveries and
 * provider calls. Only globally routed unicast addresses pass: loopback, private, link-local,
 * unique-local, carrier-grade NAT, multicast, reserved and the IPv6 forms that embed an IPv4
 * address (mapped, NAT64, 6to4, Teredo) are refused, unless the caller's setting allows private
 * targets (WEBHOOK_ALLOW_PRIVATE_TARGETS for deliveries, `<SLUG>_BASE_URL` for a provider). An
 * IPv4-mapped IPv6 address is judged as the IPv4 address it maps.
 */
export class ForbiddenAddressError extends Error {
  override name = 'ForbiddenAddressError';
  readonly code = 'FORBIDDEN_ADDRESS';
  constructor(
    readonly address: string,
    readonly range: string,
    /** What would allow it, for the operator reading the error (e.g. `WEBHOOK_ALLOW_PRIVATE_TARGETS is off`). */
    hint: string | null = null,
  ) {
    super(`target address ${address} is ${range} and not allowed${hint ? ` (${hint})` : ''}`);
  }
}

/** The range an address falls in (`unicast` for a public one), or null when it is no IP address. */
export function addressRange(address: string): string | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // Zone ids (fe80::1%eth0) only appear on link-local addresses.
  const unzoned = bare.split('%')[0]!;
  if (!isIP(unzoned)) return null;
  try {
    return ipaddr.process(unzoned).range();
  } catch {
    return null;
  }
}

/** Throws ForbiddenAddressError unless the address is public (or private targets are allowed). */
export function checkAddress(address: string, allowPrivate: boolean, hint: string | null = null): void {
  if (allowPrivate) return;
  const range = addressRange(address);
  if (range === null) throw new ForbiddenAddressError(address, 'not an IP address', hint);
  if (range !== 'unicast') throw new ForbiddenAddressError(address, range, hint);
}

/** The host of a URL when it is an IP literal (brackets removed), else null. */
export function literalHost(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : null;
}
