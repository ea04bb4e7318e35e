import type { Command } from 'commander';
import { applyConsent, readConsentEvents, type ConsentState, type ReplayedConsent } from '../../commands/connections/consentReplay.js';
import { listConsentHistory, toConsentEventView } from '../../queries/connections/consentHistory.js';
import type { Scalar } from '../readstore/readStore.js';
import { UUID_RE } from '../shared/ids.js';
import { CliError, printJson, withContext, type OpenContext } from './shared.js';

/**
 * `consents replay --user <id>`: replays the user's consent events from the event store and prints
 * each with the consent state after it. `--at <time>`: only the state at that time. `--verify`:
 * compares the replay with the consent history read model and fails on any difference.
 */
export function registerConsentsCommands(program: Command, open: OpenContext): void {
  const consents = program.command('consents').description("audit a user's consent history");
  consents
    .command('replay')
    .description('replay a user’s consent events from the event store: one JSON line per event with the consent state after it')
    .requiredOption('--user <user_id>', 'the user (uuid)')
    .option('--at <time>', 'print only the consent state at this RFC 3339 time')
    .option('--verify', 'compare the replay with the read model; exit non-zero on any difference')
    .action(async (opts: { user: string; at?: string; verify?: boolean }) => {
      if (!UUID_RE.test(opts.user)) throw new CliError(`--user must be a user id (uuid), got: ${opts.user}`);
      const at = opts.at === undefined ? null : Date.parse(opts.at);
      if (at !== null && (Number.isNaN(at) || !/^\d{4}-\d{2}-\d{2}T/.test(opts.at!))) throw new CliError(`--at must be an RFC 3339 time, got: ${opts.at}`);
      const userId = opts.user.toLowerCase();
      await withContext(open, { runBackground: opts.verify === true }, async (ctx) => {
        const events = await readConsentEvents(ctx.eventStore, userId);
        let state: ConsentState = {};
        for (const e of events) {
          if (at !== null && Date.parse(e.at) > at) break;
          state = applyConsent(state, e);
          if (at === null) printJson({ ...e, state });
        }
        if (at !== null) printJson({ at: new Date(at).toISOString(), state });
        if (opts.verify) {
          await ctx.settle();
          const differences = compare(events, await readModelEvents(ctx, userId));
          for (const d of differences) printJson({ difference: d });
          if (differences.length) throw new CliError(`the consent history read model differs from the replay in ${differences.length} place(s)`);
          printJson({ verified: true, events: events.length });
        }
      });
    });
}

async function readModelEvents(ctx: Parameters<Parameters<typeof withContext>[2]>[0], userId: string): Promise<ReplayedConsent[]> {
  const out: ReplayedConsent[] = [];
  let after: Scalar[] | null = null;
  do {
    const page = await listConsentHistory(ctx.readStore, userId, { after, limit: 1000 });
    out.push(...page.items.map(toConsentEventView));
    after = page.next;
  } while (after);
  return out.reverse();
}

const FIELDS = ['id', 'at', 'provider', 'category', 'action', 'actor_id', 'evidence'] as const;

function compare(replayed: readonly ReplayedConsent[], stored: readonly ReplayedConsent[]): string[] {
  const out: string[] = [];
  const byId = new Map(stored.map((e) => [e.id, e]));
  for (const e of replayed) {
    const s = byId.get(e.id);
    if (!s) {
      out.push(`event ${e.id} (${e.provider} ${e.category} ${e.action}) is missing from the read model`);
      continue;
    }
    byId.delete(e.id);
    for (const f of FIELDS) if (s[f] !== e[f]) out.push(`event ${e.id}: ${f} is ${JSON.stringify(s[f])} in the read model, ${JSON.stringify(e[f])} in the event store`);
  }
  for (const s of byId.values()) out.push(`event ${s.id} (${s.provider} ${s.category} ${s.action}) is in the read model but not in the event store`);
  return out;
}
