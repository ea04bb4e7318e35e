import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { z } from 'zod';
import { issueApiKey } from '../../commands/tenants/issueApiKey.js';
import { revokeApiKey } from '../../commands/tenants/revokeApiKey.js';
import { findApiKeyById } from '../../queries/tenants/findApiKey.js';
import { newSecret, sha256Hex } from '../shared/secrets.js';
import { CliError, printJson, withContext, type OpenContext } from './shared.js';

/** The same check the commands apply to ids, so a malformed id reads as "not found", not as a schema error. */
const isUuid = (s: string) => z.string().uuid().safeParse(s).success;

/** contracts.md §2: `keys revoke <key_id>`, plus `keys issue <tenant_id>` for a tenant's additional keys. */
export function registerKeysCommands(program: Command, open: OpenContext): void {
  const keys = program.command('keys').description("issue and revoke tenants' API keys");

  keys
    .command('issue')
    .description('issue an additional API key; prints {"tenant_id","key_id","api_key"} (the key is shown only here)')
    .argument('<tenant_id>', 'the tenant (uuid)')
    .action(async (tenantId: string) => {
      if (!isUuid(tenantId)) throw new CliError(`tenant not found: ${tenantId}`);
      await withContext(open, { runBackground: true }, async (ctx) => {
        const keyId = randomUUID();
        const apiKey = newSecret('tenantKey');
        // The command decides on the event stream; an unknown tenant is a DomainError (not_found).
        const result = await issueApiKey(ctx.eventStore, { tenantId, keyId, keyHash: sha256Hex(apiKey), at: new Date().toISOString(), by: 'cli' });
        await ctx.settle(result.position);
        printJson({ tenant_id: tenantId, key_id: keyId, api_key: apiKey });
      });
    });

  keys
    .command('revoke')
    .description('revoke an API key by its id; prints {"key_id","revoked":true} (revoking twice is not an error)')
    .argument('<key_id>', 'the key id (uuid)')
    .action(async (keyId: string) => {
      await withContext(open, { runBackground: true }, async (ctx) => {
        await ctx.settle();
        const key = isUuid(keyId) ? await findApiKeyById(ctx.readStore, keyId) : null;
        if (!key) throw new CliError(`api key not found: ${keyId}`);
        const result = await revokeApiKey(ctx.eventStore, { tenantId: key.tenant_id, keyId, at: new Date().toISOString(), by: 'cli' });
        if (result.position > 0) await ctx.settle(result.position);
        printJson({ key_id: keyId, revoked: true });
      });
    });
}

