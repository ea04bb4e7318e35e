import { ConcurrencyError, StreamDeletedError, type EventStore, type RecordedEvent } from '../../src/eventstore/eventStore.js';
import { loadSyncRun, type LoadedRun } from './queueSyncRun.js';
import { isUnfinished, syncRunState, type SyncRunEvent, type SyncRunState } from './syncRun.js';

/**
 * The moves of a run after it is queued. Each is appended at the revision its caller holds: an
 * attempt overtaken by a later one (its queue job taken over) or by a cancellation finds its
 * next append refused (LeaseLostError) and stops. Leases and renewals are the work queue's
 * (src/processes/sync/syncRunJob.ts); the run's stream holds business facts only.
 */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  constructor(readonly stream: string) {
    super(`the sync run ${stream} was taken over or finished by another process`);
  }
}

export type HeldRun = { stream: string; id: number; state: SyncRunState; revision: number };

const base = (s: SyncRunState) => ({ tenant_id: s.queued!.tenant_id, user_id: s.queued!.user_id, provider: s.queued!.provider });

async function append(eventStore: EventStore, run: HeldRun, events: SyncRunEvent[]): Promise<HeldRun & { position: number }> {
  try {
    const result = await eventStore.appendToStream(run.stream, events, { expectedRevision: run.revision });
    let state = run.state;
    for (const e of events) state = syncRunState.evolve(state, e as RecordedEvent<SyncRunEvent>);
    return { ...run, state, revision: result.nextExpectedRevision, position: result.lastPosition };
  } catch (err) {
    if (err instanceof ConcurrencyError || err instanceof StreamDeletedError) throw new LeaseLostError(run.stream);
    throw err;
  }
}

export const ABANDONED = 'the attempt ended without an outcome (its process stopped)';

/** Whether a worker may take the run now: due after its wait, or running on a lease that ran out. */
export function isClaimable(s: SyncRunState, now: Date): boolean {
  if (!s.queued) return false;
  if (s.status === 'running') return s.leaseUntil !== null && Date.parse(s.leaseUntil) <= now.getTime();
  if (!isUnfinished(s.status)) return false;
  return s.nextAttemptAt === null || Date.parse(s.nextAttemptAt) <= now.getTime();
}

/**
 * Claims a push delivery's run for `worker` until now + leaseMs (a redelivery carrying on a
 * delivery that died mid-way; recordPushedPayloads): an append at the revision read, so of two
 * processes claiming at once one wins; null when the run is not claimable or another won. Pulls
 * are claimed on the work queue instead (startSyncAttempt).
 */
export async function claimSyncRun(eventStore: EventStore, stream: string, worker: string, leaseMs: number, now: Date): Promise<HeldRun | null> {
  const run: LoadedRun | null = await loadSyncRun(eventStore, stream);
  if (!run || !isClaimable(run.state, now)) return null;
  try {
    return await append(eventStore, run, attemptStart(run, worker, now, new Date(now.getTime() + leaseMs).toISOString()));
  } catch (err) {
    if (err instanceof LeaseLostError) return null;
    throw err;
  }
}

/** What starting an attempt appends: the abandoned attempt's failure first when the run was left running. */
function attemptStart(run: LoadedRun, worker: string, now: Date, leaseUntil?: string): SyncRunEvent[] {
  const events: SyncRunEvent[] = [];
  // An attempt whose process stopped failed without an answer: it counts, so a pull that keeps
  // ending its process runs out of attempts like any other failure.
  if (run.state.status === 'running') {
    events.push({
      type: 'sync.run_attempt_failed',
      data: { ...base(run.state), attempt: run.state.attempt, status: 'retrying', error: ABANDONED, failed_at: now.toISOString(), next_attempt_at: now.toISOString() },
    });
  }
  events.push({
    type: 'sync.run_started',
    data: { ...base(run.state), attempt: run.state.attempts + events.length + 1, worker, started_at: now.toISOString(), ...(leaseUntil ? { lease_until: leaseUntil } : {}) },
  });
  return events;
}

/** Why a pull's job found no attempt to start. */
export type NoAttempt = { reason: 'finished' } | { reason: 'not_due'; dueAt: Date };

/**
 * Starts an attempt of a pull whose queue job `worker` holds (the queue keeps one holder per run
 * and one pull per connection, so this is no claim): `sync.run_started`, after the abandoned
 * attempt's failure when a process that died left the run running. Appended at the revision
 * read, so a stale holder's later appends are refused (LeaseLostError).
 */
export async function startSyncAttempt(eventStore: EventStore, stream: string, worker: string, now: Date): Promise<HeldRun | NoAttempt> {
  const run = await loadSyncRun(eventStore, stream);
  if (!run?.state.queued || !isUnfinished(run.state.status)) return { reason: 'finished' };
  const due = run.state.nextAttemptAt === null ? null : Date.parse(run.state.nextAttemptAt);
  if (run.state.status !== 'running' && due !== null && due > now.getTime()) return { reason: 'not_due', dueAt: new Date(due) };
  return append(eventStore, run, attemptStart(run, worker, now));
}

export const succeedSyncRun = (eventStore: EventStore, run: HeldRun, objectsStored: number, now: Date) =>
  append(eventStore, run, [
    {
      type: 'sync.run_succeeded',
      data: { ...base(run.state), attempt: run.state.attempt, trigger: run.state.queued!.trigger, objects_stored: objectsStored, window_end: run.state.queued!.window_end, finished_at: now.toISOString() },
    },
  ]);

export const failSyncAttempt = (eventStore: EventStore, run: HeldRun, f: { status: 'retrying' | 'rate_limited'; error: string; nextAttemptAt: Date }, now: Date) =>
  append(eventStore, run, [
    {
      type: 'sync.run_attempt_failed',
      data: { ...base(run.state), attempt: run.state.attempt, status: f.status, error: f.error, failed_at: now.toISOString(), next_attempt_at: f.nextAttemptAt.toISOString() },
    },
  ]);

export const failSyncRun = (eventStore: EventStore, run: HeldRun, f: { reason: 'refused' | 'rejected' | 'exhausted' | 'not_enabled'; error: string }, now: Date) =>
  append(eventStore, run, [
    {
      type: 'sync.run_failed',
      data: { ...base(run.state), run_id: run.id, attempt: run.state.attempt, attempts: run.state.attempts + 1, reason: f.reason, error: f.error, finished_at: now.toISOString() },
    },
  ]);

/**
 * Cancels an unfinished run (spec: the connection was disconnected, the user deleted or the
 * provider's data erased). Retried on a concurrent append: a run being claimed or renewed is
 * cancelled all the same, and its worker's next append is refused.
 */
export async function cancelSyncRun(eventStore: EventStore, stream: string, reason: string, now: Date): Promise<boolean> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const run = await loadSyncRun(eventStore, stream);
    if (!run || !run.state.queued || !isUnfinished(run.state.status)) return false;
    try {
      await append(eventStore, run, [{ type: 'sync.run_cancelled', data: { ...base(run.state), reason, finished_at: now.toISOString() } }]);
      return true;
    } catch (err) {
      if (err instanceof LeaseLostError) continue;
      throw err;
    }
  }
  return false;
}
