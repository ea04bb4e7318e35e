import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { createTenant } from '../../commands/tenants/createTenant.js';
import type { Scalar } from '../readstore/readStore.js';
import { listTenants } from '../../queries/tenants/listTenants.js';
import { newSecret, sha256Hex } from '../shared/secrets.js';
import { printJson, withContext, type OpenContext } from './shared.js';

const PAGE = 500;

/** contracts.md §2: `tenants create <name>` and `tenants list`. */
export function registerTenantsCommands(program: Command, open: OpenContext): void {
  const tenants = program.command('tenants').description('create and list tenants');

  tenants
    .command('create')
    .description('create a tenant with its first API key; prints {"tenant_id","name","api_key"} (the key is shown only here)')
    .argument('<name>', 'display name of the tenant')
    .action(async (name: string) => {
      await withContext(open, { runBackground: true }, async (ctx) => {
        const tenantId = randomUUID();
        const apiKey = newSecret('tenantKey');
        const result = await createTenant(ctx.eventStore, {
          tenantId,
          name,
          keyId: randomUUID(),
          keyHash: sha256Hex(apiKey),
          at: new Date().toISOString(),
          by: 'cli',
        });
        // The key must authenticate as soon as the line is printed.
        await ctx.settle(result.position);
        printJson({ tenant_id: tenantId, name: result.state.name ?? name.trim(), api_key: apiKey });
      });
    });

  tenants
    .command('list')
    .description('print every tenant, oldest first, one JSON line {"tenant_id","name","created_at"} each')
    .action(async () => {
      await withContext(open, { runBackground: true }, async (ctx) => {
        await ctx.settle();
        let after: Scalar[] | null = null;
        do {
          const page = await listTenants(ctx.readStore, { after, limit: PAGE });
          for (const t of page.items) printJson({ tenant_id: t.id, name: t.name, created_at: t.created_at });
          after = page.next;
        } while (after);
      });
    });
}
