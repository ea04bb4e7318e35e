import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { checkAddress, addressRange, ForbiddenAddressError } from './addressPolicy.js';

export type GuardedAgentOptions = {
  allowPrivateTargets: boolean;
  /** Said with every refusal: the setting that would allow it. */
  refusalHint: string;
  /** Connect time-out; the whole attempt has its own (15 s) on top. */
  connectTimeoutMs: number;
};

/**
 * The HTTP agent webhook deliveries and provider calls go through. Every connection is checked
 * twice: the name is resolved with only allowed addresses kept (so a private answer is never
 * dialled), and the address the socket actually connected to is checked again before a byte of
 * the request is written. The second check is the one that counts: whatever a resolver answered
 * a moment earlier (DNS rebinding), the request only leaves towards an address the policy allows.
 */
export function guardedAgent(options: GuardedAgentOptions): Agent {
  const allow = options.allowPrivateTargets;
  const hint = options.refusalHint;
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const allowed = allow ? addresses : addresses.filter((a) => addressRange(a.address) === 'unicast');
      if (allowed.length === 0) {
        const first = addresses[0];
        const refused = first ? new ForbiddenAddressError(first.address, addressRange(first.address) ?? 'unknown', hint) : new Error(`no address for ${hostname}`);
        return callback(refused as NodeJS.ErrnoException, '', 0);
      }
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
  const connect = buildConnector({ timeout: options.connectTimeoutMs, lookup });
  return new Agent({
    connections: null,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    connect: (connectOptions, callback) => {
      const host = connectOptions.hostname.replace(/^\[|\]$/g, '');
      try {
        // An IP literal is not looked up: judge it before dialling.
        if (addressRange(host) !== null) checkAddress(host, allow, hint);
      } catch (err) {
        return callback(err as Error, null);
      }
      connect(connectOptions, (err, socket) => {
        if (err || !socket) return callback(err ?? new Error('no socket'), null);
        try {
          checkAddress(socket.remoteAddress ?? '', allow, hint);
        } catch (refused) {
          socket.destroy();
          return callback(refused as Error, null);
        }
        callback(null, socket);
      });
    },
  });
}
