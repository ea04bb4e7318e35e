import { TRIGGER_PRIORITY, type SyncTrigger } from '../../../commands/sync/syncRun.js';
import { MAX_ATTEMPTS_LIMIT, type NewJob } from '../../workqueue/workQueue.js';

/**
 * The sync engine's jobs on the work queue (issue 26; docs/architecture.md "Work queue", and the
 * choices in docs/decisions.md):
 * - `sync.run`: one attempt after another of one run, keyed by the run's stream, locked by
 *   `connection:<user>:<provider>` so the queue itself runs one pull per connection at a time.
 *   Priority is the trigger's (manual 0, notification 1, scheduled 2, backfill 3: lower first,
 *   as the queue orders), due at the run's `next_attempt_at`. The run decides when it has failed
 *   for good (SYNC_MAX_ATTEMPTS, rate limits); the queue's own limit is only a backstop.
 * - `sync.schedule`: one recurring job per connection, keyed by the connection, due at its next
 *   slot; it queues that slot's scheduled run and waits for the following slot.
 */
export const SYNC_RUN_KIND = 'sync.run';
export const SYNC_SCHEDULE_KIND = 'sync.schedule';
export const SYNC_KINDS = [SYNC_SCHEDULE_KIND, SYNC_RUN_KIND] as const;

/** The exclusivity key of a connection's pulls. */
export const connectionLock = (userId: string, provider: string) => `connection:${userId}:${provider}`;

export type SyncRunPayload = { run: string };
export type SchedulePayload = { user_id: string; provider: string };

/** The job of a run: due when its next attempt is (`due`, an ISO time). */
export function syncRunJob(run: { stream: string; user_id: string; provider: string; trigger: SyncTrigger; due: string }): NewJob {
  return {
    kind: SYNC_RUN_KIND,
    key: run.stream,
    lock: connectionLock(run.user_id, run.provider),
    priority: TRIGGER_PRIORITY[run.trigger],
    runAt: Date.parse(run.due),
    payload: { run: run.stream } satisfies SyncRunPayload,
    maxAttempts: MAX_ATTEMPTS_LIMIT,
  };
}

/** A connection's schedule, due at `runAt` (its first slot after it was established). */
export function scheduleJob(userId: string, provider: string, runAt: number): NewJob {
  return {
    kind: SYNC_SCHEDULE_KIND,
    key: `${userId}:${provider}`,
    priority: 0,
    runAt,
    payload: { user_id: userId, provider } satisfies SchedulePayload,
    maxAttempts: MAX_ATTEMPTS_LIMIT,
  };
}
