import { CONNECTED_PROVIDERS } from '../catalog/providers.js';

/**
 * The sandbox's ports, one per provider in the order of GET /v1/providers from SANDBOX_PORT
 * (default 9100): `npm run sandbox` and the demo's in-process sandbox listen on the same ones, so
 * the addresses in the README (Oura's control at 127.0.0.1:9100) hold for both.
 */
export function sandboxPorts(env: NodeJS.ProcessEnv): Record<string, number> {
  const base = Number(env.SANDBOX_PORT ?? 9100);
  if (!Number.isInteger(base) || base < 1 || base > 65535 - CONNECTED_PROVIDERS.length) throw new Error('SANDBOX_PORT must be a port number');
  return Object.fromEntries(CONNECTED_PROVIDERS.map((p, i) => [p.slug, base + i]));
}
