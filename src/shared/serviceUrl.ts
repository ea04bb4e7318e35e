/**
 * The variable the command-line clients (`npm run cli -- import`, `npm run mcp-client`) read the
 * service's address from, and the demo's block exports (issue 36 point 7: the block exported KEY
 * and USER_ID but not the address, so a demo on another port was "fetch failed" at 8080).
 */
export const SERVICE_URL_VARIABLE = 'WELLSTREAM_URL';

/** The service's base address from WELLSTREAM_URL, without a trailing slash; null when unset or empty. */
export function serviceUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string | null {
  const url = env[SERVICE_URL_VARIABLE]?.trim();
  return url ? url.replace(/\/+$/, '') : null;
}
