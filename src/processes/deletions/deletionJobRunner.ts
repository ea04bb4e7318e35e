import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { deletionStream, isFinished, type DeletionStarted } from '../../../commands/deletions/deletionJob.js';
import { ensureJobRequest } from '../../../commands/deletions/ensureJobRequest.js';
import { eraseProviderData } from '../../../commands/deletions/eraseProviderData.js';
import { eraseUser } from '../../../commands/deletions/eraseUser.js';
import type { ErasureDeps } from '../../../commands/deletions/erasureSteps.js';
import { failDeletionJob } from '../../../commands/deletions/failDeletionJob.js';
import type { DeletionJobDoc } from '../../../projections/deletions/deletionJobsProjection.js';
import { ConcurrencyError } from '../../eventstore/eventStore.js';
import { deterministicId } from '../../shared/ids.js';
import { PollLoop } from '../../shared/pollLoop.js';
import { LeaseKeeper, type LeaseSettings } from '../../projector/leaseKeeper.js';

export type DeletionJobRunnerOptions = Omit<ErasureDeps, 'settle' | 'signal' | 'onStep'> & {
  /** Waits until every projection has applied the log up to `position` (default: head), at most `timeoutMs`. */
  settle: (position: number | undefined, timeoutMs: number) => Promise<void>;
  log?: Logger;
  pollMs?: number;
  /** An attempt that has not finished after this long is failed, with the step it was at and its last error. */
  timeoutMs?: number;
  /** Pause before a failed step runs again (within the same attempt). */
  retryPauseMs?: number;
  /** Jobs run at once; each is bounded by `timeoutMs`, so a stuck one holds a slot only that long. */
  concurrency?: number;
  /** One process owns the embedded store: a job found running at start-up was cut short by a crash. */
  takeOverRunningAtStart?: boolean;
  /** Arms an attempt's deadline; answers its disarm. A timer by default (tests expire it themselves). */
  deadline?: (ms: number, expire: () => void) => () => void;
  /**
   * Several service processes: jobs run only in the process holding the runner's lease. Taking
   * it takes over the jobs found running (their runner's process died or lost the lease).
   */
  leases?: LeaseSettings;
};

/** The lease of the deletion runner (several service processes). */
export const DELETION_RUNNER_LEASE = 'deletion-runner';

const timerDeadline = (ms: number, expire: () => void) => {
  const timer = setTimeout(expire, ms);
  return () => clearTimeout(timer);
};

type Claim = { jobId: string; kind: 'user' | 'provider' };

/**
 * Runs deletion jobs (user deletions and provider erasures) to their end, each on its own:
 * finds pending jobs (and running ones whose worker died) in the deletion_jobs read model, claims
 * each with a `deletion.started` append at the revision it read (of two workers one wins), and
 * runs its steps with a deadline. A step that throws runs again after a pause; a job not done by
 * its deadline is `failed` with the reason (spec "Deletion job"). Jobs run side by side, so one
 * that is stuck never holds up the others.
 */
export class DeletionJobRunner {
  private readonly worker = `deletions-${randomUUID()}`;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private readonly loop: PollLoop;
  private takeOver: boolean;
  private readonly timeoutMs: number;
  private readonly retryPauseMs: number;
  private readonly concurrency: number;

  constructor(private readonly o: DeletionJobRunnerOptions) {
    this.loop = new PollLoop(() => this.poll(), o.pollMs ?? 500, (err) => this.o.log?.error({ err }, 'deletion poll failed'));
    this.timeoutMs = o.timeoutMs ?? 10 * 60_000;
    this.retryPauseMs = o.retryPauseMs ?? 1000;
    this.concurrency = o.concurrency ?? 8;
    this.takeOver = o.takeOverRunningAtStart ?? false;
  }

  private keeper: LeaseKeeper | null = null;

  start(): void {
    if (!this.o.leases) return this.loop.start();
    this.keeper = new LeaseKeeper(this.o.leases, this.o.log);
    this.keeper.hold(DELETION_RUNNER_LEASE, {
      start: () => {
        this.takeOver = true;
        this.loop.start();
      },
      stop: () => this.stopJobs(),
    });
    void this.keeper.start().catch((err: unknown) => this.o.log?.error({ err }, 'deletion runner could not start its lease'));
  }

  /** Looks for work now (a job was just requested). */
  kick(): void {
    this.loop.kick();
  }

  /** Stops taking jobs and stops the running ones at their next step; they resume on the next start. */
  async stop(): Promise<void> {
    if (this.keeper) await this.keeper.stop();
    this.keeper = null;
    await this.stopJobs();
  }

  private async stopJobs(): Promise<void> {
    this.loop.stop();
    for (const r of this.running.values()) r.abort.abort(new Error('the service is stopping'));
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  private async poll(): Promise<void> {
    if (this.running.size >= this.concurrency) return;
    const jobs = await this.o.readStore.find<DeletionJobDoc>('deletion_jobs', {
      filter: { status: { $in: ['pending', 'running'] } },
      sort: [['created_at', 1]],
      limit: 100,
    });
    for (const doc of jobs) {
      if (this.running.size >= this.concurrency || this.loop.isStopped) break;
      if (this.running.has(doc._id)) continue;
      const claim = await this.claim(doc).catch((err: unknown) => {
        this.o.log?.error({ err, job: doc._id }, 'could not claim a deletion job');
        return null;
      });
      if (claim) this.launch(claim);
    }
    this.takeOver = false;
  }

  private async claim(doc: DeletionJobDoc): Promise<Claim | null> {
    const job = await ensureJobRequest(this.o.eventStore, doc._id, doc.user_id);
    if (!job) {
      await failDeletionJob(this.o.eventStore, doc._id, 'the request of this job was lost');
      return null;
    }
    const { state, revision } = job;
    if (isFinished(state)) return null;
    const now = Date.now();
    if (state.status === 'running' && !this.takeOver && state.leaseUntil && Date.parse(state.leaseUntil) > now) return null;
    const r = state.request!;
    const started: DeletionStarted = {
      type: 'deletion.started',
      data: {
        job_id: r.job_id,
        tenant_id: r.tenant_id,
        user_id: r.user_id,
        attempt: state.attempt + 1,
        worker: this.worker,
        started_at: new Date(now).toISOString(),
        // Past the attempt's deadline: another worker takes it over only if this one died.
        lease_until: new Date(now + this.timeoutMs + 60_000).toISOString(),
      },
    };
    try {
      await this.o.eventStore.appendToStream(deletionStream(r.job_id), [{ ...started, id: deterministicId(r.job_id, 'started', String(state.attempt + 1)) }], {
        expectedRevision: revision ?? 'no_stream',
      });
    } catch (err) {
      if (err instanceof ConcurrencyError) return null;
      throw err;
    }
    return { jobId: r.job_id, kind: r.provider === null ? 'user' : 'provider' };
  }

  private launch(claim: Claim): void {
    const abort = new AbortController();
    const done = this.run(claim, abort).finally(() => {
      this.running.delete(claim.jobId);
      this.kick();
    });
    this.running.set(claim.jobId, { abort, done });
  }

  private async run(claim: Claim, abort: AbortController): Promise<void> {
    const log = this.o.log?.child({ job: claim.jobId, kind: claim.kind });
    const deadline = Date.now() + this.timeoutMs;
    let at = 'starting';
    let lastError: string | null = null;
    const disarm = (this.o.deadline ?? timerDeadline)(this.timeoutMs, () => abort.abort(new Error('deadline')));
    const deps: ErasureDeps = {
      ...this.o,
      signal: abort.signal,
      onStep: (s) => (at = s),
      settle: (position) => this.o.settle(position, Math.max(1, deadline - Date.now())),
    };
    const erase = claim.kind === 'user' ? eraseUser : eraseProviderData;
    const work = (async () => {
      for (;;) {
        try {
          await erase(deps, claim.jobId);
          return;
        } catch (err) {
          if (abort.signal.aborted) return;
          lastError = err instanceof Error ? err.message : String(err);
          log?.warn({ err: lastError, step: at }, 'deletion step failed; trying again');
          await new Promise((r) => setTimeout(r, this.retryPauseMs));
        }
      }
    })();
    const ended = new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      await Promise.race([work, ended]);
    } finally {
      disarm();
    }
    if (!abort.signal.aborted) {
      log?.info('deletion job done');
      return;
    }
    // Stopping: the job stays running and is taken over at the next start.
    if (this.loop.isStopped) return;
    const reason = `did not finish within ${Math.round(this.timeoutMs / 1000)} s; it was ${at}${lastError ? ` (last error: ${lastError})` : ''}`;
    log?.warn({ reason }, 'deletion job failed');
    await failDeletionJob(this.o.eventStore, claim.jobId, reason).catch((err: unknown) => log?.error({ err }, 'could not record the failure of a deletion job'));
  }
}
