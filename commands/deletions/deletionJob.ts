import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';

/** The job is created by `user.deletion_requested` (or a provider erasure request); these events move it along. */
export type DeletionStarted = Event<'deletion.started', { job_id: string; tenant_id: string; user_id: string; started_at: string }>;
export type DeletionFinished = Event<
  'deletion.finished',
  { job_id: string; tenant_id: string; user_id: string; status: 'done' | 'failed'; finished_at: string; error: string | null }
>;
export type DeletionEvent = DeletionStarted | DeletionFinished;

export const deletionStream = (jobId: string) => `deletion-${jobId}`;

export type DeletionState = { status: 'pending' | 'running' | 'done' | 'failed' };

export const deletionState: StreamState<DeletionState, DeletionEvent> = {
  initialState: () => ({ status: 'pending' }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'deletion.started':
        return { status: 'running' };
      case 'deletion.finished':
        return { status: event.data.status };
      default:
        return state;
    }
  },
};
