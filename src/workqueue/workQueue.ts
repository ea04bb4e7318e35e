/**
 * One leased work queue for every background job (issue 26; docs/architecture.md "Work queue").
 *
 * A job has a `kind` (what runs it), an optional `key` (at most one live job per kind and key:
 * enqueueing an existing live key answers that job) and an optional `lock`, the exclusivity key:
 * at most one job per lock is `running` at any moment, across kinds (one pull per connection, one
 * deletion per user). The queue itself holds the lock, in the same atomic write that makes a job
 * running, so nothing depends on a read model that lags.
 *
 * States (the diagram: docs/architecture.md "Work queue"): `available` (waiting; claimable once
 * `runAt ≤ now`, which covers jobs due later and jobs waiting to retry, so "due" is one index
 * range and nothing moves jobs between waiting states), `running` (one holder, one generation),
 * and the final `completed`, `cancelled` (both removed after the retention period) and `dead`
 * (attempts spent or parked; kept, with payload, progress and error, until an operator replays
 * or purges it, or its user is deleted: `purgeNaming`). An error is kept without the values it
 * quotes (jobInput.ts `errorText`). A running job whose lease expired goes back to available (or dead, its attempts
 * spent) at the next claim: the lost attempt counts.
 *
 * Fencing: every claim (and every take-over, and an operator's cancel of a running job) raises
 * the job's `generation`. The holder's writes (heartbeat, complete, fail, park, cancel) name the
 * generation they hold and change nothing once it moved or the job left `running`: they throw
 * `LostLeaseError`, so a holder that was paused past its lease stops at its next write. Side
 * effects outside the queue (a webhook sent, a provider called) are at least once: handlers are
 * idempotent, and renew before a side effect rather than after.
 *
 * Times are epoch milliseconds from the caller's (injected) clock; processes sharing a queue are
 * assumed to agree on the time to well within a lease.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const JOB_STATES = ['available', 'running', 'completed', 'dead', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export type NewJob = {
  kind: string;
  /** Deduplicates among the live (available or running) jobs of the kind. */
  key?: string;
  /** Exclusivity key: at most one running job per lock, whatever its kind. */
  lock?: string;
  /** Small JSON (at most MAX_PAYLOAD_BYTES): ids and references, never health values or secrets. */
  payload?: Json;
  /** Lower runs first (manual work before scheduled work); default 0. */
  priority?: number;
  /** Due time; default now. */
  runAt?: number;
  /** Attempts before the job is dead-lettered; default DEFAULT_MAX_ATTEMPTS. */
  maxAttempts?: number;
  /** Whose work it is: claims take turns between tenants, then between a tenant's users (fairLanes.ts). */
  tenant?: string;
  user?: string;
};

export type Job = {
  id: string;
  kind: string;
  key: string | null;
  lock: string | null;
  state: JobState;
  priority: number;
  runAt: number;
  attempts: number;
  maxAttempts: number;
  /** The job's lane (fairLanes.ts): null when enqueued without one. */
  tenant: string | null;
  user: string | null;
  /** The holder of the running job, or the last one. */
  holder: string | null;
  generation: number;
  leaseExpiresAt: number | null;
  payload: Json;
  /** Where the job got to (a position, a step), saved by the holder; kept in a dead letter. */
  progress: Json;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  attemptedAt: number | null;
  finishedAt: number | null;
};

/** What a holder carries to prove it still holds the job. */
export type JobLease = { jobId: string; holder: string; generation: number; expiresAt: number };

export type Claimed = { job: Job; lease: JobLease };

export type ClaimRequest = {
  kinds: readonly string[];
  /** At most this many jobs (1 to MAX_CLAIM). */
  n: number;
  holder: string;
  leaseMs: number;
  now?: number;
  /**
   * At most this many running jobs of a kind per tenant while another tenant has a due job of
   * the kind (fairLanes.ts); without it a tenant may take every slot its turns give it.
   */
  tenantCap?: number;
};

export type Enqueued = { job: Job; created: boolean };

export type ReplayOutcome =
  | { outcome: 'replayed'; job: Job }
  | { outcome: 'not_dead' }
  /** A live job with the same kind and key exists: it will do the work. */
  | { outcome: 'key_taken'; live: Job };

export type DeadLetterQuery = { kind?: string; limit?: number; after?: { finishedAt: number; id: string } };

export interface WorkQueue {
  readonly backend: 'sqlite' | 'mongodb';
  enqueue(job: NewJob, now?: number): Promise<Enqueued>;
  /**
   * Takes up to `n` due jobs of the kinds, taking turns between tenants and then users (each
   * lane's jobs ordered by priority, due time, then id; fairLanes.ts), as running
   * under `holder` for `leaseMs`. First hands back running jobs of those kinds whose lease
   * expired (a lost attempt), so they compete in their place; jobs of other kinds are left to
   * their own claimers (whose clocks and leases may differ). Never gives one job to two holders; skips jobs
   * whose lock another running job holds.
   */
  claim(request: ClaimRequest): Promise<Claimed[]>;
  /** Extends the lease (never shortens it), saving `progress` when given. */
  heartbeat(lease: JobLease, options: { leaseMs: number; progress?: Json; now?: number }): Promise<JobLease>;
  complete(lease: JobLease, options?: { now?: number }): Promise<void>;
  /**
   * The attempt failed. Due again at `retryAt` (null: the queue's back-off for the attempt
   * number), or dead-lettered when its attempts are spent. Answers the state it went to.
   */
  fail(lease: JobLease, options: { error: string; retryAt: number | null; progress?: Json; now?: number }): Promise<'available' | 'dead'>;
  /**
   * The run went as planned and the job waits for its next one (a recurring job: a connection's
   * schedule): back to available, due at `runAt`, attempts reset, its key kept live and its lock
   * free. Not a failure: nothing counts against the job.
   */
  reschedule(lease: JobLease, options: { runAt: number; progress?: Json; now?: number }): Promise<void>;
  /** Sets the job aside for an operator at once (a permanent failure), keeping where it failed. */
  park(lease: JobLease, options: { error: string; progress?: Json; now?: number }): Promise<void>;
  /** The holder stops its job as no longer wanted. */
  cancel(lease: JobLease, options: { reason: string; now?: number }): Promise<void>;
  /** Cancels a live job from outside (an operator, a disconnect); its holder's next write fails. */
  cancelJob(id: string, options: { reason: string; now?: number }): Promise<boolean>;
  get(id: string): Promise<Job | null>;
  findLive(kind: string, key: string): Promise<Job | null>;
  /** Dead letters, most recent first, in pages of at most MAX_LIST. */
  deadLetters(query?: DeadLetterQuery): Promise<Job[]>;
  /** A dead job back to available, due now, attempts reset, progress kept. */
  replay(id: string, now?: number): Promise<ReplayOutcome>;
  /** Removes dead letters (these ids, or the oldest of a kind), at most `limit`. */
  purgeDead(options: { ids?: readonly string[]; kind?: string; limit?: number }): Promise<number>;
  /** The job of this kind and key dead-lettered last, if any (the ETL sweep: was an upload's job given up on?). */
  lastDead(kind: string, key: string): Promise<Job | null>;
  /**
   * Erasure (contracts §19): removes, whatever their state, the jobs one of whose texts (key, lock,
   * payload, progress, last error, holder) holds `needle`, but the job of kind and key `except`
   * (the deletion running it). One page of at most `limit` jobs in id order after `after` is looked at per call, so a
   * call's work is bounded whatever the queue holds; `next` is where the next page starts, null
   * once the queue was gone through.
   */
  purgeNaming(needle: string, options: { except?: { kind: string; key: string }; after?: string | null; limit?: number }): Promise<{ purged: number; next: string | null }>;
  /** Removes completed and cancelled jobs past their retention, at most `limit` (MongoDB's TTL index does it too). */
  purgeExpired(options?: { now?: number; limit?: number }): Promise<number>;
  /** How many jobs of each kind are in each state (an operator's view; scans the table). */
  counts(): Promise<{ kind: string; state: JobState; count: number }[]>;
  close(): Promise<void>;
}

export class LostLeaseError extends Error {
  readonly code = 'JOB_LEASE_LOST';
  constructor(readonly jobId: string, readonly generation: number) {
    super(`job ${jobId}: generation ${generation} no longer holds it`);
    this.name = 'LostLeaseError';
  }
}

export const DEFAULT_MAX_ATTEMPTS = 5;
export const MAX_ATTEMPTS_LIMIT = 100;
export const MAX_CLAIM = 100;
export const MAX_LIST = 1000;
export const MAX_PAYLOAD_BYTES = 16 * 1024;
export const MAX_NAME_LENGTH = 512;
export const MAX_ERROR_LENGTH = 2000;
export const MAX_LEASE_MS = 24 * 3600_000;
/** Expired running jobs handed back per claim: a claim's work stays bounded after a mass crash. */
export const TAKEOVER_BATCH = 100;
/** Completed and cancelled jobs are kept this long by default, then purged. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 3600_000;

export type QueueOptions = {
  clock?: () => number;
  retentionMs?: number;
  /** Delay before attempt `attempts + 1` after a failure whose caller named no time. */
  backoff?: (attempts: number) => number;
};

/** 10 s, 40 s, 160 s, 640 s … capped at an hour: the ETL's schedule before the queue. */
export function defaultBackoff(attempts: number): number {
  return Math.min(10_000 * 4 ** Math.max(0, attempts - 1), 3600_000);
}
