import { CONNECTED_PROVIDERS } from '../catalog/providers.js';
import { settingPrefix } from '../sources/shared/providers.js';
import { SANDBOX_CLIENTS } from './sandboxClients.js';
import type { Sandbox } from './sandboxServer.js';

/**
 * The service's settings that point providers at a running sandbox (contracts §7): per provider
 * `<SLUG>_BASE_URL` and the sandbox application's `<SLUG>_CLIENT_ID` and `<SLUG>_CLIENT_SECRET`.
 * Every provider unless `slugs` names some.
 */
export function sandboxSettings(sandbox: Pick<Sandbox, 'urls'>, slugs: readonly string[] = CONNECTED_PROVIDERS.map((p) => p.slug)): Record<string, string> {
  const env: Record<string, string> = {};
  for (const slug of slugs) {
    const prefix = settingPrefix(slug);
    env[`${prefix}_BASE_URL`] = sandbox.urls[slug]!;
    env[`${prefix}_CLIENT_ID`] = SANDBOX_CLIENTS[slug]!.id;
    env[`${prefix}_CLIENT_SECRET`] = SANDBOX_CLIENTS[slug]!.secret;
  }
  return env;
}
