import type { Logger } from 'pino';
import { isFinished, deletionStream, type DeletionStarted } from '../../../commands/deletions/deletionJob.js';
import { ensureJobRequest } from '../../../commands/deletions/ensureJobRequest.js';
import { eraseProviderData } from '../../../commands/deletions/eraseProviderData.js';
import { eraseUser } from '../../../commands/deletions/eraseUser.js';
import type { ErasureDeps } from '../../../commands/deletions/erasureSteps.js';
import { failDeletionJob } from '../../../commands/deletions/failDeletionJob.js';
import { ConcurrencyError } from '../../eventstore/eventStore.js';
import { deterministicId } from '../../shared/ids.js';
import type { NewJob } from '../../workqueue/workQueue.js';
import { JobRetry, type JobContext, type JobHandler } from '../jobs/jobHandler.js';
import { backoffDelay, transientKind } from '../../shared/transientErrors.js';
import { ErasureNotApplied, settleErasure } from './erasureApplied.js';

/** The deletions' job kind on the work queue. */
export const DELETION_JOB = 'deletion';

/** Attempts of a deletion job before it is failed (and dead-lettered). */
export const DELETION_ATTEMPTS = 10;

/**
 * The queue job of a deletion (a user's deletion or a provider erasure): keyed by the job id,
 * and locked by the user, so that one deletion per user runs at a time, held by the queue.
 */
export function deletionJob(jobId: string, userId: string): NewJob {
  return { kind: DELETION_JOB, key: jobId, lock: `user:${userId}`, payload: { jobId, userId }, maxAttempts: DELETION_ATTEMPTS };
}

export type DeletionJobOptions = Omit<ErasureDeps, 'settle' | 'signal' | 'onStep'> & {
  /** Waits until every projection has applied the log up to `position` (default: head), at most `timeoutMs`. */
  settle: (position: number | undefined, timeoutMs: number) => Promise<void>;
  log?: Logger;
  /** An attempt that has not finished after this long fails the job, with the step it was at and its last error. */
  timeoutMs?: number;
  /** Pause before the first retry of a failed attempt; doubled at each next one, at most a minute. */
  retryPauseMs?: number;
  /**
   * Pause before a job whose erasure some read model has not applied looks again (a projection
   * stopped on it, a dead letter holding it): doubled at each next look, at most five minutes.
   */
  waitPauseMs?: number;
  /** Jobs run at once; each is bounded by `timeoutMs`, so a stuck one holds a slot only that long. */
  concurrency?: number;
  /** Arms an attempt's deadline; answers its disarm. A timer by default (tests expire it themselves). */
  deadline?: (ms: number, expire: () => void) => () => void;
};

const timerDeadline = (ms: number, expire: () => void) => {
  const timer = setTimeout(expire, ms);
  return () => clearTimeout(timer);
};

/**
 * Runs deletion jobs (user deletions and provider erasures) from the work queue (issue 26). Each
 * attempt records `deletion.started`, then carries the job's steps on from wherever the last
 * attempt stopped (every step can run again). A step that throws fails the attempt: the queue
 * tries again after a pause, up to DELETION_ATTEMPTS; the last failure, or an attempt that ran
 * out of time, ends the job `failed` with the reason (spec "Deletion job"). Jobs run side by
 * side, so one that is stuck never holds up the others.
 *
 * `done` only when it is true (contracts §19): a job whose erasure some read model has not applied
 * (a projection stopped on it, a dead letter holding it: erasureApplied.ts) is neither done nor
 * failed; it stays running, says why in the log and in its queue job's progress, and looks again
 * later without spending an attempt. A store failing for a while is retried by the job runner.
 */
export function deletionJobHandler(o: DeletionJobOptions): JobHandler {
  const timeoutMs = o.timeoutMs ?? 10 * 60_000;
  const pauseMs = o.retryPauseMs ?? 1000;
  return {
    kind: DELETION_JOB,
    concurrency: o.concurrency ?? 8,
    run: async (context) => {
      const { jobId } = context.job.payload as { jobId: string };
      const log = o.log?.child({ job: jobId, attempt: context.job.attempts });
      const outcome = await runAttempt(o, timeoutMs, context, log);
      if (outcome === 'done') return log?.info('deletion job done');
      if (outcome.kind === 'waiting') {
        // Neither done nor failed: the job stays running and looks again later, attempts untouched.
        const waits = ((context.job.progress as { waits?: number } | null)?.waits ?? 0) + 1;
        await context.renew({ waiting: outcome.reason, waits });
        const pause = backoffDelay(waits, { firstMs: o.waitPauseMs ?? 5000, maxMs: 5 * 60_000 });
        log?.warn({ reason: outcome.reason, waits, retryInMs: pause }, 'deletion job not done: its erasure is not applied by every read model; looking again later');
        return { rescheduleAt: Date.now() + pause };
      }
      const last = context.job.attempts >= context.job.maxAttempts;
      if (outcome.kind === 'deadline' || last) {
        log?.warn({ reason: outcome.reason }, 'deletion job failed');
        await failDeletionJob(o.eventStore, jobId, outcome.reason);
        return;
      }
      log?.warn({ err: outcome.reason }, 'deletion attempt failed; it will be tried again');
      throw new JobRetry(outcome.reason, Date.now() + Math.min(60_000, pauseMs * 2 ** (context.job.attempts - 1)));
    },
  };
}

type Outcome = 'done' | { kind: 'deadline' | 'error' | 'waiting'; reason: string };

async function runAttempt(o: DeletionJobOptions, timeoutMs: number, { job, signal, lease }: JobContext, log: Logger | undefined): Promise<Outcome> {
  const { jobId, userId } = job.payload as { jobId: string; userId: string };
  const found = await ensureJobRequest(o.eventStore, jobId, userId);
  if (!found) {
    await failDeletionJob(o.eventStore, jobId, 'the request of this job was lost');
    return 'done';
  }
  if (isFinished(found.state)) return 'done';
  const r = found.state.request!;
  const expires = new AbortController();
  const both = AbortSignal.any([signal, expires.signal]);
  const deadline = Date.now() + timeoutMs;
  const disarm = (o.deadline ?? timerDeadline)(timeoutMs, () => expires.abort(new Error('deadline')));
  let at = 'starting';
  try {
    await recordStart(o, r, found.state.attempt + 1, found.revision, lease().expiresAt);
    const settle = (position: number | undefined) => settleErasure({ eventStore: o.eventStore, readStore: o.readStore, jobId, position, settle: o.settle, deadline });
    const deps: ErasureDeps = { ...o, signal: both, onStep: (s) => (at = s), settle };
    const erase = r.provider === null ? eraseUser : eraseProviderData;
    const ended = new Promise<never>((_, reject) => both.addEventListener('abort', () => reject(both.reason as Error), { once: true }));
    await Promise.race([erase(deps, jobId), ended]);
    return 'done';
  } catch (err) {
    // Stopping or the lease lost: the runner writes nothing more, and the job is taken up again.
    if (signal.aborted) throw err;
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof ErasureNotApplied) return { kind: 'waiting', reason: message };
    // A store failing for a while: the job runner runs the attempt again once it answers, no attempt spent.
    if (transientKind(err) && !expires.signal.aborted) throw err;
    if (expires.signal.aborted) return { kind: 'deadline', reason: `did not finish within ${Math.round(timeoutMs / 1000)} s; it was ${at}` };
    log?.debug({ step: at }, 'deletion step failed');
    return { kind: 'error', reason: `it was ${at}: ${message}` };
  } finally {
    disarm();
  }
}

/** `deletion.started`: the job's record shows it running, and how many attempts it took. */
async function recordStart(o: DeletionJobOptions, r: Pick<DeletionStarted['data'], 'job_id' | 'tenant_id' | 'user_id'>, attempt: number, revision: number | null, leaseUntil: number): Promise<void> {
  const started: DeletionStarted = {
    type: 'deletion.started',
    data: { job_id: r.job_id, tenant_id: r.tenant_id, user_id: r.user_id, attempt, worker: 'work-queue', started_at: new Date().toISOString(), lease_until: new Date(leaseUntil).toISOString() },
  };
  try {
    await o.eventStore.appendToStream(deletionStream(r.job_id), [{ ...started, id: deterministicId(r.job_id, 'started', String(attempt)) }], {
      expectedRevision: revision ?? 'no_stream',
    });
  } catch (err) {
    // The queue holds the job: a concurrent append is an erasure step of the same job, not a rival.
    if (!(err instanceof ConcurrencyError)) throw err;
  }
}
