import type { Command } from 'commander';
import { listAuditLog } from '../../queries/audit/listAuditLog.js';
import type { Scalar } from '../readstore/readStore.js';
import { UUID_RE } from '../shared/ids.js';
import { CliError, parsePositiveInt, printJson, withContext, type OpenContext } from './shared.js';

const PAGE = 500;

/** `audit list`: the admin's log, or one tenant's, newest first. */
export function registerAuditCommands(program: Command, open: OpenContext): void {
  const audit = program.command('audit').description('read audit logs');

  audit
    .command('list')
    .description("print the admin audit log (or a tenant's with --tenant), newest first, one JSON line per entry")
    .option('--tenant <tenant_id>', "the tenant whose log to print (default: the admin's log)")
    .option('--limit <n>', 'print at most n entries (default: all)', parsePositiveInt)
    .action(async (opts: { tenant?: string; limit?: number }) => {
      if (opts.tenant !== undefined && !UUID_RE.test(opts.tenant)) throw new CliError(`--tenant must be a tenant id (uuid), got: ${opts.tenant}`);
      const log = opts.tenant ?? 'admin';
      await withContext(open, { runBackground: true }, async (ctx) => {
        await ctx.settle();
        let remaining = opts.limit ?? Infinity;
        let after: Scalar[] | null = null;
        do {
          const page = await listAuditLog(ctx.readStore, log, { after, limit: Math.min(PAGE, remaining) });
          for (const { _id, ...entry } of page.items) printJson(entry);
          remaining -= page.items.length;
          after = page.next;
        } while (after && remaining > 0);
      });
    });
}
