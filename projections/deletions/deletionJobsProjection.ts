import type { DeletionEvent } from '../../commands/deletions/deletionJob.js';
import type { UserDeletionRequested } from '../../commands/users/user.js';
import { defineProjection } from '../../src/projector/projection.js';

export type DeletionJobDoc = {
  _id: string;
  job_id: string;
  tenant_id: string;
  user_id: string;
  provider: string | null;
  status: 'pending' | 'running' | 'done' | 'failed';
  created_at: string;
  finished_at: string | null;
  /** Why a failed job failed; null otherwise. */
  error: string | null;
};

/**
 * Jobs outlive their users: nothing here is removed when the user is erased. A user deletion's
 * job is created by the request on the user's stream and again by the job's own stream (which
 * outlives the user's), whichever comes first; a provider erasure's by its own stream.
 */
export const deletionJobsProjection = defineProjection<DeletionEvent | UserDeletionRequested>({
  name: 'deletion_jobs',
  collections: [
    {
      name: 'deletion_jobs',
      indexes: [{ fields: [['user_id', 1]] }, { fields: [['status', 1], ['created_at', 1]] }],
    },
  ],
  eventTypes: ['user.deletion_requested', 'deletion.requested', 'deletion.started', 'deletion.finished'],
  evolve: (event) => {
    switch (event.type) {
      case 'user.deletion_requested':
      case 'deletion.requested': {
        const d = event.data;
        const provider = event.type === 'deletion.requested' ? event.data.provider : null;
        return [
          {
            op: 'update',
            collection: 'deletion_jobs',
            id: d.job_id,
            upsert: true,
            setOnInsert: { job_id: d.job_id, tenant_id: d.tenant_id, user_id: d.user_id, provider, status: 'pending', created_at: d.requested_at, finished_at: null, error: null },
          },
        ];
      }
      case 'deletion.started':
        return [{ op: 'update', collection: 'deletion_jobs', id: event.data.job_id, set: { status: 'running' } }];
      case 'deletion.finished':
        return [{ op: 'update', collection: 'deletion_jobs', id: event.data.job_id, set: { status: event.data.status, finished_at: event.data.finished_at, error: event.data.error } }];
      default:
        return [];
    }
  },
});
