import { UNFINISHED } from '../../commands/sync/syncRun.js';
import { DomainError } from '../../commands/shared/domainError.js';
import { createTenant } from '../../commands/tenants/createTenant.js';
import { SYNC_RUNS } from '../../projections/sync/syncRunsProjection.js';
import { getTenant } from '../../queries/tenants/listTenants.js';
import type { AppContext } from '../server/appContext.js';
import { deterministicId } from '../shared/ids.js';
import { newSecret, sha256Hex } from '../shared/secrets.js';
import { demoBlock } from './demoBlock.js';
import { connectDemoUser } from './demoConnections.js';
import { demoDays, fillDemoUser } from '../processes/demo/fillDemoUser.js';
import { DEMO_PERSONAS } from '../sources/files/demo/personas.js';

/** The demo tenant has a fixed id, so a later start finds the one the first start made. */
export const DEMO_TENANT_ID = deterministicId('wellstream-demo-tenant');
export const DEMO_START_DAYS = 30;
/** How long the demo waits for its uploads and pulls to be processed before printing its block anyway. */
export const DEMO_SETTLE_MS = 120_000;

export type DemoOptions = {
  /** The in-process provider sandbox's address per provider (src/demo/demoConnections.ts), when it runs. */
  sandbox?: Record<string, string> | null;
  /** The admin key this start generated: shown in the block, once. */
  adminKey?: string | null;
  now?: Date;
  settleMs?: number;
};

/**
 * `npm start -- --demo` (or DEMO=1): on the first start a tenant named "demo" with one user per
 * persona, each with 30 days of synthetic data; later starts add the days gone by. Answers the
 * block to print, once the demo's uploads and pulls are processed (src/demo/demoBlock.ts).
 */
export async function setUpDemo(ctx: AppContext, baseUrl: string, options: DemoOptions = {}): Promise<string> {
  const now = options.now ?? new Date();
  let apiKey: string | null = null;
  let tenant = await getTenant(ctx.readStore, DEMO_TENANT_ID);
  if (!tenant) {
    apiKey = newSecret('tenantKey');
    const name = await createDemoTenant(ctx, apiKey, now);
    tenant = { _id: DEMO_TENANT_ID, id: DEMO_TENANT_ID, name, created_at: now.toISOString() };
  }
  // Filled on every demo start: days already present are skipped, a day that went by since is added.
  const users = [];
  for (const persona of DEMO_PERSONAS) users.push(await fillDemoUser(ctx, { tenantId: DEMO_TENANT_ID, persona, days: DEMO_START_DAYS, now }));
  const mix = users[0]!;
  const days = demoDays(DEMO_START_DAYS, now);
  const end = new Date(Date.parse(`${days.at(-1)}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  // With the in-process provider sandbox, the first user is also connected to providers through the consent flow.
  const connected = options.sandbox ? await connectDemoUser(ctx, { baseUrl, tenantId: DEMO_TENANT_ID, userId: mix.user.id, now }) : [];
  const stillRunning = await settle(ctx, users.map((u) => u.user.id), options.settleMs ?? DEMO_SETTLE_MS);
  return demoBlock(
    {
      baseUrl,
      tenant: { id: DEMO_TENANT_ID, name: tenant.name },
      users: users.map((u) => ({ external_ref: u.user.external_ref, persona: u.persona })),
      userId: mix.user.id,
      apiKey,
      adminKey: options.adminKey ?? null,
      start: days[0]!,
      end,
      sandbox: options.sandbox ?? null,
      connected,
      stillRunning,
      privateWebhooks: ctx.config.webhookAllowPrivateTargets,
    },
    ctx.config,
  );
}

/** Creates the demo tenant as "demo", or "demo-<id>" when an operator's tenant already has that name (names are unique). */
async function createDemoTenant(ctx: AppContext, apiKey: string, now: Date): Promise<string> {
  const create = async (name: string) => {
    const input = { tenantId: DEMO_TENANT_ID, name, keyId: deterministicId('wellstream-demo-key', DEMO_TENANT_ID), keyHash: sha256Hex(apiKey), at: now.toISOString(), by: 'demo' };
    await ctx.settle((await createTenant(ctx.eventStore, input)).position, ['tenants']);
    return name;
  };
  try {
    return await create('demo');
  } catch (err) {
    if (!(err instanceof DomainError && err.code === 'conflict')) throw err;
    return create(`demo-${DEMO_TENANT_ID.slice(0, 8)}`);
  }
}

/**
 * Waits until the demo users' ETL jobs and provider pulls are done, so that the block is printed
 * after their log lines rather than among them; gives up after `ms`. Answers how many still run.
 */
async function settle(ctx: AppContext, userIds: string[], ms: number): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    await ctx.settle(undefined, ['etl_jobs', SYNC_RUNS]);
    const [jobs, pulls] = await Promise.all([
      ctx.readStore.count('etl_jobs', { user_id: { $in: userIds }, status: { $in: ['pending', 'running'] } }),
      ctx.readStore.count(SYNC_RUNS, { user_id: { $in: userIds }, status: { $in: [...UNFINISHED] } }),
    ]);
    if (jobs + pulls === 0) {
      // The record read models catch up on the projector thread: the block's curl lines then read every day.
      await ctx.projectors.waitForIdle();
      return 0;
    }
    if (Date.now() >= until) return jobs + pulls;
    await new Promise((r) => setTimeout(r, 250));
  }
}
