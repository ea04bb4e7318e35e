import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';
import type { ErasureEvent } from './erasureEvents.js';

/**
 * One stream per deletion job (`deletion-<job>`), kept for good: the job stays readable after its
 * user is gone (spec "Deletion job"), and the erasure events on it outlive what they erased.
 *
 * `provider` null: the whole user is deleted; otherwise that provider's data is erased, and
 * `generation` is the generation of the user's data of that provider the job erases (with every
 * earlier one).
 */
export type DeletionRequested = Event<
  'deletion.requested',
  {
    job_id: string;
    tenant_id: string;
    user_id: string;
    provider: string | null;
    generation: number | null;
    external_ref: string | null;
    requested_at: string;
    requested_by: string;
  }
>;
/** A worker took the job (again, after a crash or a lease that ran out): `attempt` counts them. */
export type DeletionStarted = Event<
  'deletion.started',
  { job_id: string; tenant_id: string; user_id: string; attempt: number; worker: string; started_at: string; lease_until: string }
>;
/** Records of the user and provider found in the read models just before they are dropped (data.erased's records_deleted). */
export type DeletionRecordsCounted = Event<'deletion.records_counted', { job_id: string; user_id: string; provider: string; records: number }>;
export type DeletionFinished = Event<
  'deletion.finished',
  { job_id: string; tenant_id: string; user_id: string; status: 'done' | 'failed'; finished_at: string; error: string | null }
>;
export type DeletionEvent = DeletionRequested | DeletionStarted | DeletionRecordsCounted | DeletionFinished;

export const deletionStream = (jobId: string) => `deletion-${jobId}`;

export type DeletionStatus = 'pending' | 'running' | 'done' | 'failed';

export type DeletionState = {
  status: DeletionStatus;
  request: DeletionRequested['data'] | null;
  attempt: number;
  leaseUntil: string | null;
  recordsCounted: number | null;
  /** The drop event (user.erased / provider_data.erased) is in the log. */
  dropped: boolean;
  /** A user deletion's `user.deleted` is in the log (its job goes on: deliveries, the profile key). */
  announced: boolean;
  error: string | null;
};

export const deletionState: StreamState<DeletionState, DeletionEvent | ErasureEvent> = {
  initialState: () => ({ status: 'pending', request: null, attempt: 0, leaseUntil: null, recordsCounted: null, dropped: false, announced: false, error: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'deletion.requested':
        return { ...state, request: event.data };
      case 'deletion.started':
        return { ...state, status: 'running', attempt: event.data.attempt, leaseUntil: event.data.lease_until };
      case 'deletion.records_counted':
        return { ...state, recordsCounted: event.data.records };
      case 'user.erased':
      case 'provider_data.erased':
        return { ...state, dropped: true };
      case 'user.deleted':
        return { ...state, announced: true };
      case 'deletion.finished':
        return { ...state, status: event.data.status, leaseUntil: null, error: event.data.error };
      default:
        return state;
    }
  },
};

export const isFinished = (s: DeletionState) => s.status === 'done' || s.status === 'failed';
