import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';

/**
 * One pull of one connection (spec "Sync run"): one stream per run, holding its queueing, the
 * start of every attempt, failed attempts and its end. Which process runs an attempt, and its
 * lease, are the work queue's (`sync.run` jobs, src/processes/sync/syncRunJob.ts). The run's integer id is the
 * global position of `sync.run_queued`, like an ETL job's.
 */
export type SyncTrigger = 'backfill' | 'scheduled' | 'notification' | 'manual';
export type SyncRunStatus = 'queued' | 'running' | 'retrying' | 'rate_limited' | 'succeeded' | 'failed' | 'cancelled';

/** Manual runs go ahead of routine work (spec "POST …/sync"); a backfill last, it is the largest. */
export const TRIGGER_PRIORITY: Record<SyncTrigger, number> = { manual: 0, notification: 1, scheduled: 2, backfill: 3 };

type Base = { tenant_id: string; user_id: string; provider: string };

export type SyncRunQueued = Event<
  'sync.run_queued',
  Base & {
    trigger: SyncTrigger;
    data_type: string | null;
    window_start: string;
    window_end: string;
    created_at: string;
    /** A backfill cut at the provider's documented history reach (issue 22): the reach, and where the window would have started. */
    history_limit?: HistoryLimit;
  }
>;
export type HistoryLimit = { days: number; asked_start: string };
/** `lease_until`: set by a push delivery's claim and by runs started before the work queue held pulls' leases. */
export type SyncRunStarted = Event<'sync.run_started', Base & { attempt: number; worker: string; started_at: string; lease_until?: string }>;
/** No longer written (a pull's lease is the work queue's, issue 26); kept so older streams still fold. */
export type SyncRunLeaseRenewed = Event<'sync.run_lease_renewed', Base & { attempt: number; lease_until: string }>;
/** An attempt failed and another is due at `next_attempt_at`: `retrying` (the provider failed) or `rate_limited` (it asked to wait). */
export type SyncRunAttemptFailed = Event<
  'sync.run_attempt_failed',
  Base & { attempt: number; status: 'retrying' | 'rate_limited'; error: string; failed_at: string; next_attempt_at: string }
>;
export type SyncRunSucceeded = Event<'sync.run_succeeded', Base & { attempt: number; trigger: SyncTrigger; objects_stored: number; window_end: string; finished_at: string }>;
/** Attempts spent (`exhausted`) or the grant refused (`refused`): the spec's `failed`. */
export type SyncRunFailed = Event<
  'sync.run_failed',
  Base & { run_id: number; attempt: number; attempts: number; reason: 'refused' | 'rejected' | 'exhausted' | 'not_enabled'; error: string; finished_at: string }
>;
export type SyncRunCancelled = Event<'sync.run_cancelled', Base & { reason: string; finished_at: string }>;

export type SyncRunEvent = SyncRunQueued | SyncRunStarted | SyncRunLeaseRenewed | SyncRunAttemptFailed | SyncRunSucceeded | SyncRunFailed | SyncRunCancelled;

export const SYNC_RUN_EVENT_TYPES: readonly SyncRunEvent['type'][] = [
  'sync.run_queued',
  'sync.run_started',
  'sync.run_lease_renewed',
  'sync.run_attempt_failed',
  'sync.run_succeeded',
  'sync.run_failed',
  'sync.run_cancelled',
];

export const SYNC_RUN_PREFIX = 'syncrun-';
/**
 * Run streams are named by what made them, so a trigger seen twice (a reactor replayed after a
 * crash, two processes scheduling the same slot) names the same run and queues it once.
 */
export const syncRunStream = (userId: string, provider: string, key: string) => `${SYNC_RUN_PREFIX}${userId}-${provider}-${key}`;

export type SyncRunState = {
  queued: SyncRunQueued['data'] | null;
  status: SyncRunStatus;
  /** Failed attempts so far (spec `attempts`). */
  attempts: number;
  /** Failed attempts because the provider was unavailable: these spend the run's retries. */
  retries: number;
  /** Number of the attempt in progress or last made. */
  attempt: number;
  worker: string | null;
  leaseUntil: string | null;
  nextAttemptAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  objectsStored: number | null;
  error: string | null;
};

export const UNFINISHED: readonly SyncRunStatus[] = ['queued', 'running', 'retrying', 'rate_limited'];
export const isUnfinished = (s: SyncRunStatus) => UNFINISHED.includes(s);

export const syncRunState: StreamState<SyncRunState, SyncRunEvent> = {
  initialState: () => ({
    queued: null,
    status: 'queued',
    attempts: 0,
    retries: 0,
    attempt: 0,
    worker: null,
    leaseUntil: null,
    nextAttemptAt: null,
    startedAt: null,
    finishedAt: null,
    objectsStored: null,
    error: null,
  }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'sync.run_queued':
        return { ...state, queued: event.data, status: 'queued', nextAttemptAt: event.data.created_at };
      case 'sync.run_started':
        return {
          ...state,
          status: 'running',
          attempt: event.data.attempt,
          worker: event.data.worker,
          leaseUntil: event.data.lease_until ?? null,
          nextAttemptAt: null,
          startedAt: state.startedAt ?? event.data.started_at,
        };
      case 'sync.run_lease_renewed':
        return { ...state, leaseUntil: event.data.lease_until };
      case 'sync.run_attempt_failed':
        return {
          ...state,
          status: event.data.status,
          attempts: state.attempts + 1,
          retries: state.retries + (event.data.status === 'retrying' ? 1 : 0),
          error: event.data.error,
          nextAttemptAt: event.data.next_attempt_at,
          leaseUntil: null,
          worker: null,
        };
      case 'sync.run_succeeded':
        return { ...state, status: 'succeeded', objectsStored: event.data.objects_stored, finishedAt: event.data.finished_at, leaseUntil: null, worker: null, nextAttemptAt: null };
      case 'sync.run_failed':
        return { ...state, status: 'failed', attempts: event.data.attempts, error: event.data.error, finishedAt: event.data.finished_at, leaseUntil: null, worker: null, nextAttemptAt: null };
      case 'sync.run_cancelled':
        return { ...state, status: 'cancelled', finishedAt: event.data.finished_at, leaseUntil: null, worker: null, nextAttemptAt: null };
      default:
        return state;
    }
  },
};
