import { randomUUID } from 'node:crypto';
import { issueApiKey } from '../../commands/tenants/issueApiKey.js';
import { revokeApiKey } from '../../commands/tenants/revokeApiKey.js';
import type { AppContext } from '../server/appContext.js';
import { CONNECTED_PROVIDERS } from '../catalog/providers.js';
import { settingPrefix } from '../sources/shared/providers.js';
import { consentThroughSandbox, fetchGet } from '../sandbox/consentBrowser.js';
import { startSandbox, type Sandbox } from '../sandbox/sandboxServer.js';
import { sandboxPorts } from '../sandbox/sandboxPorts.js';
import { sandboxSettings } from '../sandbox/sandboxSettings.js';
import { newSecret, sha256Hex } from '../shared/secrets.js';

/** The providers the demo's first user is connected to, through the same consent flow a tenant's app drives. */
export const DEMO_CONNECTED_PROVIDERS = ['oura', 'withings'] as const;

/**
 * Before the configuration is read: a demo lets webhooks go to loopback and private addresses
 * (WEBHOOK_ALLOW_PRIVATE_TARGETS), so a receiver on the same machine works (issue 36 point 7);
 * an operator's explicit setting stands, and a start without the demo keeps refusing them.
 */
export function allowDemoWebhookTargets(env: NodeJS.ProcessEnv): void {
  env.WEBHOOK_ALLOW_PRIVATE_TARGETS ??= 'true';
}

/**
 * Before the configuration is read: when no provider is configured at all, the demo starts the
 * provider sandbox in this process and points every provider at it (`<SLUG>_BASE_URL` and the
 * sandbox's client keys), so a demo shows pulls without any provider account. A provider the
 * operator configured keeps its settings, and then the demo connects nothing.
 */
export async function startDemoSandbox(env: NodeJS.ProcessEnv): Promise<Sandbox | null> {
  const configured = CONNECTED_PROVIDERS.some((p) => env[`${settingPrefix(p.slug)}_CLIENT_ID`] || env[`${settingPrefix(p.slug)}_BASE_URL`]);
  if (configured) return null;
  // The ports of `npm run sandbox` (README), or any free ones while those are taken.
  const sandbox = await startSandbox({ host: '127.0.0.1', ports: sandboxPorts(env) }).catch((err: NodeJS.ErrnoException) =>
    err.code === 'EADDRINUSE' ? startSandbox({ host: '127.0.0.1' }) : Promise.reject(err),
  );
  Object.assign(env, sandboxSettings(sandbox));
  return sandbox;
}

/**
 * Connects a demo user to each of DEMO_CONNECTED_PROVIDERS over HTTP, as a tenant's app would:
 * `POST /v1/users/{id}/connections/{provider}` on the service, its authorize_url (which binds the
 * flow to a cookie), the sandbox's consent page (which consents at once and redirects), then the
 * service's own callback with that cookie. The backfill that the new
 * grant queues runs in the background. The sandbox forgets its grants when the process stops, so
 * every demo start connects again (a reconnect, pulling from where the data ends).
 *
 * The calls need a tenant key; the demo's own was shown once and is stored hashed, so a key is
 * issued for these calls and revoked right after (both are in the tenant's audit log).
 */
export async function connectDemoUser(ctx: AppContext, o: { baseUrl: string; tenantId: string; userId: string; now?: Date }): Promise<string[]> {
  const at = (o.now ?? new Date()).toISOString();
  const key = newSecret('tenantKey');
  const keyId = randomUUID();
  const issued = await issueApiKey(ctx.eventStore, { tenantId: o.tenantId, keyId, keyHash: sha256Hex(key), at, by: 'demo-sandbox' });
  await ctx.settle(issued.position, ['tenants']);
  const connected: string[] = [];
  try {
    for (const provider of DEMO_CONNECTED_PROVIDERS) {
      const started = await fetch(`${o.baseUrl}/v1/users/${o.userId}/connections/${provider}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      if (started.status !== 200) throw new Error(`connecting ${provider} answered ${started.status}`);
      const { authorize_url } = (await started.json()) as { authorize_url: string };
      // A browser of its own per provider: the start address binds the state to its cookie.
      const { callback } = await consentThroughSandbox(authorize_url, fetchGet(o.baseUrl));
      if (callback.status >= 400) throw new Error(`the ${provider} callback answered ${callback.status}`);
      connected.push(provider);
    }
  } finally {
    await revokeApiKey(ctx.eventStore, { tenantId: o.tenantId, keyId, at: new Date().toISOString(), by: 'demo-sandbox' });
  }
  return connected;
}
