import { loadSyncRun } from '../../../commands/sync/queueSyncRun.js';
import { isUnfinished } from '../../../commands/sync/syncRun.js';
import { LeaseLostError, startSyncAttempt, type HeldRun } from '../../../commands/sync/syncRunTransitions.js';
import type { Logger } from 'pino';
import { JobRetry, type JobContext, type JobHandler } from '../jobs/jobHandler.js';
import { runPull, type PullDeps, type PullOutcome } from './runPull.js';
import { SYNC_RUN_KIND, type SyncRunPayload } from './syncJobs.js';

export type PullJobDeps = PullDeps & {
  concurrency: number;
  log?: Logger;
  /** Told how each attempt ended (the engine's `runDue` answers them). */
  onOutcome?: (outcome: PullOutcome) => void;
};

/**
 * Runs the attempts of one sync run under its `sync.run` job (issue 26). The queue holds the
 * lease and renews it; its signal aborts the pull the moment a renewal fails, and every append
 * of the attempt's outcome is preceded by a renewal (a holder that lost the job stops there) and
 * made at the run's revision (a later attempt's start refuses it). The run's stream records the
 * business facts only: started, attempt failed, succeeded, failed, cancelled. How the attempt
 * ended decides the job's: a run waiting for its next attempt is retried by the queue at that
 * time; a finished run completes the job.
 */
export function pullJobHandler(deps: PullJobDeps): JobHandler {
  return {
    kind: SYNC_RUN_KIND,
    concurrency: deps.concurrency,
    leaseMs: deps.settings.leaseMs,
    run: async (ctx) => {
      const { run: stream } = ctx.job.payload as SyncRunPayload;
      const started = await startSyncAttempt(deps.eventStore, stream, ctx.job.holder ?? 'sync', deps.now());
      if ('reason' in started) {
        // Enqueued ahead of its time (a sweep, a restarted feeder): it waits for its attempt.
        if (started.reason === 'not_due') throw new JobRetry('the run waits for its next attempt', started.dueAt.getTime());
        return;
      }
      await attempt(deps, ctx, started);
    },
  };
}

async function attempt(deps: PullJobDeps, ctx: JobContext, held: HeldRun): Promise<void> {
  let run = held;
  const outcome = await runPull(deps, {
    current: () => run,
    apply: async (f) => {
      // Renewed before the append: a holder that lost its job writes nothing more.
      await ctx.renew().catch((err: unknown) => {
        if (ctx.signal.aborted) throw new LeaseLostError(run.stream);
        // A renewal that failed for another reason (the store busy): the append is fenced by the run's revision anyway.
        deps.log?.warn({ err, run: run.stream }, 'could not renew a sync job before recording; recording all the same');
      });
      run = await f(run);
    },
    signal: ctx.signal,
  });
  deps.onOutcome?.(outcome);
  deps.log?.info({ run: run.stream, outcome, attempt: run.state.attempt }, 'sync run attempt ended');
  switch (outcome) {
    case 'retrying':
    case 'rate_limited':
      // The run says when its next attempt is; the queue holds the job until then.
      throw new JobRetry(run.state.error ?? outcome, Date.parse(run.state.nextAttemptAt!));
    case 'lost': {
      // The queue took the job away (or the service stops): the runner writes nothing, or hands it back.
      if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('the sync job was stopped');
      // Another append overtook the attempt: a cancellation ends the job, anything else is tried again.
      const now = await loadSyncRun(deps.eventStore, run.stream);
      if (now && isUnfinished(now.state.status)) throw new Error('the run changed under this attempt; it is tried again');
      return;
    }
    default:
      return;
  }
}
