import type { Job, JobLease, Json } from '../../workqueue/workQueue.js';

/**
 * What a background process registers with the job runner for one kind of job (issue 26;
 * docs/architecture.md "Work queue", "Background processes").
 */
export type JobHandler = {
  /** The job kind it serves (`etl`, `deletion`, `sync.run`, `reactor.<name>` ...). */
  kind: string;
  /** Jobs of this kind run at once in this process. */
  concurrency: number;
  /** Lease of one attempt; renewed every third of it while the handler runs. Default: the runner's. */
  leaseMs?: number;
  /**
   * Runs one attempt. Returning completes the job (returning `{ rescheduleAt }` instead makes a
   * recurring job wait for its next run, attempts reset); throwing fails the attempt (retried after
   * the queue's back-off, or at `JobRetry.retryAt`, until its attempts are spent); `JobParked`
   * sets it aside for an operator at once; `JobCancelled` ends it as no longer wanted.
   * `signal` fires the moment a renewal finds the lease lost (or the runner stops): the handler
   * stops before its next side effect, and nothing it reports afterwards is written.
   */
  run(context: JobContext): Promise<void | { rescheduleAt: number }>;
};

export type JobContext = {
  job: Job;
  lease: () => JobLease;
  signal: AbortSignal;
  /**
   * Renews at once (saving where the handler got to, when given); throws LostLeaseError once the
   * job is no longer held. Called before a side effect the queue cannot fence (an append, a send).
   */
  renew(progress?: Json): Promise<void>;
};

/** The attempt failed; try again at `retryAt` (epoch ms) rather than after the queue's back-off. */
export class JobRetry extends Error {
  override name = 'JobRetry';
  constructor(message: string, readonly retryAt: number | null, readonly progress?: Json) {
    super(message);
  }
}

/** A permanent failure: the job becomes a dead letter at once, for an operator to replay or purge. */
export class JobParked extends Error {
  override name = 'JobParked';
  constructor(message: string, readonly progress?: Json) {
    super(message);
  }
}

/** The job is no longer wanted (its subject is gone): it ends cancelled, not dead. */
export class JobCancelled extends Error {
  override name = 'JobCancelled';
}
