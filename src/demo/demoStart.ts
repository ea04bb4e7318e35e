import { createTenant } from '../../commands/tenants/createTenant.js';
import { getTenant } from '../../queries/tenants/listTenants.js';
import type { AppContext } from '../server/appContext.js';
import { deterministicId } from '../shared/ids.js';
import { newSecret, sha256Hex } from '../shared/secrets.js';
import { connectDemoUser } from './demoConnections.js';
import { demoDays, fillDemoUser } from '../processes/demo/fillDemoUser.js';
import { DEMO_PERSONAS } from '../sources/files/demo/personas.js';

/** The demo tenant has a fixed id, so a later start finds the one the first start made. */
export const DEMO_TENANT_ID = deterministicId('wellstream-demo-tenant');
export const DEMO_START_DAYS = 30;

/**
 * `npm start -- --demo` (or DEMO=1): on the first start a tenant named "demo" with one user per
 * persona, each with 30 days of synthetic data; answers what to print. Its API key is shown then
 * only (keys are stored hashed); later starts say where the demo stands and how to get a new key.
 */
export async function setUpDemo(ctx: AppContext, baseUrl: string, options: { sandbox?: boolean; now?: Date } = {}): Promise<string> {
  const now = options.now ?? new Date();
  let apiKey: string | null = null;
  if (!(await getTenant(ctx.readStore, DEMO_TENANT_ID))) {
    apiKey = newSecret('tenantKey');
    const result = await createTenant(ctx.eventStore, {
      tenantId: DEMO_TENANT_ID,
      name: 'demo',
      keyId: deterministicId('wellstream-demo-key', DEMO_TENANT_ID),
      keyHash: sha256Hex(apiKey),
      at: now.toISOString(),
      by: 'demo',
    });
    await ctx.settle(result.position, ['tenants']);
  }
  // Filled on every demo start: days already present are skipped, a day that went by since is added.
  const users = [];
  for (const persona of DEMO_PERSONAS) users.push(await fillDemoUser(ctx, { tenantId: DEMO_TENANT_ID, persona, days: DEMO_START_DAYS, now }));
  const mix = users[0]!;
  const days = demoDays(DEMO_START_DAYS, now);
  const end = new Date(Date.parse(`${days.at(-1)}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  // With the in-process provider sandbox, the first user is also connected to providers through the consent flow.
  const connected = options.sandbox ? await connectDemoUser(ctx, { baseUrl, tenantId: DEMO_TENANT_ID, userId: mix.user.id, now }) : [];
  const key = apiKey ?? '$WELLSTREAM_KEY';
  const curl = `curl -s -H "Authorization: Bearer ${key}" "${baseUrl}/v1/users/${mix.user.id}/samples/stats?type=heart_rate&interval=day&start=${days[0]}&end=${end}"`;
  const lines = [
    '',
    `Demo tenant "demo" (${DEMO_TENANT_ID}) with ${users.length} users: ${users.map((u) => `${u.user.external_ref} (${u.persona})`).join(', ')}.`,
    apiKey
      ? `Its API key (shown this once; saved nowhere in the clear):\n\n  ${apiKey}\n`
      : `Its API key was shown on the first demo start. For another: npm run cli -- keys issue ${DEMO_TENANT_ID}\n`,
    'Merged heart-rate statistics of demo-user, per day:',
    '',
    `  ${curl}`,
    '',
    'The same user in the operator console (sign in with the API key):',
    '',
    `  ${baseUrl}/console/#/users/${mix.user.id}`,
    '',
    ...(connected.length > 0
      ? [
          `${mix.user.external_ref} is connected to ${connected.join(' and ')} through the built-in provider sandbox; their backfill runs now. Its pulls:`,
          '',
          `  curl -s -H "Authorization: Bearer ${key}" "${baseUrl}/v1/users/${mix.user.id}/sync-runs"`,
          '',
        ]
      : []),
  ];
  return lines.join('\n');
}
