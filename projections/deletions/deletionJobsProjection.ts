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
};

/** Jobs outlive their users: nothing here is removed when the user is erased. */
export const deletionJobsProjection = defineProjection<DeletionEvent | UserDeletionRequested>({
  name: 'deletion_jobs',
  collections: [{ name: 'deletion_jobs', indexes: [{ fields: [['user_id', 1]] }] }],
  eventTypes: ['user.deletion_requested', 'deletion.started', 'deletion.finished'],
  evolve: (event) => {
    switch (event.type) {
      case 'user.deletion_requested': {
        const d = event.data;
        return [
          {
            op: 'update',
            collection: 'deletion_jobs',
            id: d.job_id,
            upsert: true,
            setOnInsert: { job_id: d.job_id, tenant_id: d.tenant_id, user_id: d.user_id, provider: null, status: 'pending', created_at: d.requested_at, finished_at: null },
          },
        ];
      }
      case 'deletion.started':
        return [{ op: 'update', collection: 'deletion_jobs', id: event.data.job_id, set: { status: 'running' } }];
      case 'deletion.finished':
        return [{ op: 'update', collection: 'deletion_jobs', id: event.data.job_id, set: { status: event.data.status, finished_at: event.data.finished_at } }];
    }
  },
});
