import type { Command } from 'commander';
import type { Job } from '../workqueue/workQueue.js';
import { CliError, formatTable, parsePositiveInt, printJson, printLine, withContext, type OpenContext } from './shared.js';

/**
 * `jobs status`, `jobs dead-letters`, `jobs replay <id>` and `jobs purge` over the work queue of
 * background jobs (issue 26; docs/architecture.md "Work queue"). Nothing runs here: a replayed
 * job is taken up by a running service.
 */
export function registerJobsCommands(program: Command, open: OpenContext): void {
  const group = program.command('jobs').description('background jobs on the work queue: counts, dead letters, replay and purge');
  const none = { runBackground: false };

  group
    .command('status')
    .description('how many jobs of each kind are in each state (available, running, completed, dead, cancelled)')
    .option('--json', 'one JSON line per kind and state instead of a table')
    .action(async (opts: { json?: boolean }) => {
      const rows = (await withContext(open, none, (ctx) => ctx.jobs.queue.counts())).sort((a, b) => a.kind.localeCompare(b.kind) || a.state.localeCompare(b.state));
      if (opts.json) return rows.forEach((r) => printJson(r));
      for (const line of formatTable(['KIND', 'STATE', 'COUNT'], rows.map((r) => [r.kind, r.state, r.count]))) printLine(line);
    });

  group
    .command('dead-letters')
    .description('dead jobs (attempts spent or parked), newest first, with their payload, where they got to and their last error')
    .option('--kind <kind>', 'only jobs of this kind (etl, deletion, reactor.<name>, ...)')
    .option('--limit <n>', 'at most this many (at most 1000)', parsePositiveInt, 100)
    .option('--json', 'one JSON line per dead letter instead of a table')
    .action(async (opts: { kind?: string; limit: number; json?: boolean }) => {
      if (opts.limit > 1000) throw new CliError('--limit is at most 1000');
      const jobs = await withContext(open, none, (ctx) => ctx.jobs.queue.deadLetters({ kind: opts.kind, limit: opts.limit }));
      if (opts.json) return jobs.forEach((j) => printJson(jobJson(j)));
      const rows = jobs.map((j) => [j.id, j.kind, j.key ?? '-', j.attempts, new Date(j.finishedAt ?? j.updatedAt).toISOString(), firstLine(j.lastError)]);
      for (const line of formatTable(['ID', 'KIND', 'KEY', 'ATTEMPTS', 'FINISHED_AT', 'ERROR'], rows)) printLine(line);
    });

  group
    .command('replay')
    .description('makes a dead job due again now, with fresh attempts and its progress kept; a running service takes it up')
    .argument('<id>', 'the job id (from `jobs dead-letters`)')
    .action(async (id: string) => {
      const outcome = await withContext(open, none, (ctx) => ctx.jobs.queue.replay(id));
      if (outcome.outcome === 'not_dead') throw new CliError(`no dead job ${id}`);
      if (outcome.outcome === 'key_taken') throw new CliError(`job ${id} not replayed: job ${outcome.live.id} of the same key is live and will do its work`);
      printLine(`job ${id} (${outcome.job.kind}) is due again`);
    });

  group
    .command('purge')
    .description('removes dead letters (the ids given, those of --kind, or --all of them) and finished jobs past their retention')
    .argument('[ids...]', 'dead job ids')
    .option('--kind <kind>', 'only dead letters of this kind')
    .option('--all', 'every dead letter (up to --limit)')
    .option('--limit <n>', 'at most this many dead letters (at most 1000)', parsePositiveInt, 1000)
    .action(async (ids: string[], opts: { kind?: string; all?: boolean; limit: number }) => {
      if (opts.limit > 1000) throw new CliError('--limit is at most 1000');
      // Dead letters are what an operator has left to look at: they go only when named (ids, --kind, --all).
      const which = ids.length > 0 || opts.kind !== undefined || opts.all;
      const [dead, expired] = await withContext(open, none, async (ctx) => [
        which ? await ctx.jobs.queue.purgeDead({ ids: ids.length > 0 ? ids : undefined, kind: opts.kind, limit: opts.limit }) : 0,
        await ctx.jobs.queue.purgeExpired({ limit: 1000 }),
      ]);
      printLine(`removed ${dead} dead letter(s) and ${expired} finished job(s) past their retention`);
    });
}

const firstLine = (text: string | null) => (text ?? '').split('\n')[0]!.slice(0, 120);

function jobJson(j: Job) {
  return {
    id: j.id,
    kind: j.kind,
    key: j.key,
    attempts: j.attempts,
    max_attempts: j.maxAttempts,
    payload: j.payload,
    progress: j.progress,
    error: j.lastError,
    created_at: new Date(j.createdAt).toISOString(),
    finished_at: j.finishedAt === null ? null : new Date(j.finishedAt).toISOString(),
  };
}
