import { PROVIDER_DATA_ERASED, USER_ERASED } from '../../src/catalog/eventTypes.js';
import type { ProviderDataErased, UserErased } from '../../commands/deletions/erasureEvents.js';
import { SYNC_RUN_EVENT_TYPES, TRIGGER_PRIORITY, type HistoryLimit, type SyncRunEvent, type SyncRunStatus, type SyncTrigger } from '../../commands/sync/syncRun.js';
import { defineProjection } from '../../src/projector/projection.js';

/** One sync run as GET …/sync-runs answers it, plus what the sync worker finds due runs by. */
export type SyncRunDoc = {
  _id: string;
  /** Global position of `sync.run_queued`. */
  id: number;
  tenant_id: string;
  user_id: string;
  provider: string;
  trigger: SyncTrigger;
  priority: number;
  status: SyncRunStatus;
  data_type: string | null;
  window_start: string;
  window_end: string;
  attempts: number;
  objects_stored: number | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  next_attempt_at: string | null;
  lease_until: string | null;
  /** A backfill cut at the provider's history reach (issue 22); absent on runs queued before. */
  history_limit?: HistoryLimit | null;
};

export const SYNC_RUNS = 'sync_runs';

export const syncRunsProjection = defineProjection<SyncRunEvent | UserErased | ProviderDataErased>({
  name: 'sync_runs',
  collections: [
    {
      name: SYNC_RUNS,
      indexes: [
        { fields: [['status', 1], ['next_attempt_at', 1]] },
        // Running runs whose lease ran out (their process died): the worker takes them over.
        { fields: [['status', 1], ['lease_until', 1]] },
        { fields: [['user_id', 1], ['id', -1]] },
        { fields: [['user_id', 1], ['provider', 1], ['id', -1]] },
      ],
      columns: ['lease_until', 'tenant_id', 'trigger'],
    },
  ],
  eventTypes: [...SYNC_RUN_EVENT_TYPES, USER_ERASED, PROVIDER_DATA_ERASED],
  evolve: (event) => {
    const id = event.streamName;
    const update = (set: Record<string, unknown>, inc?: Record<string, number>) => [{ op: 'update' as const, collection: SYNC_RUNS, id, set, ...(inc ? { inc } : {}) }];
    switch (event.type) {
      case 'sync.run_queued': {
        const d = event.data;
        return [
          {
            op: 'put',
            collection: SYNC_RUNS,
            doc: {
              _id: id,
              id: event.globalPosition,
              tenant_id: d.tenant_id,
              user_id: d.user_id,
              provider: d.provider,
              trigger: d.trigger,
              priority: TRIGGER_PRIORITY[d.trigger],
              status: 'queued',
              data_type: d.data_type,
              window_start: d.window_start,
              window_end: d.window_end,
              history_limit: d.history_limit ?? null,
              attempts: 0,
              objects_stored: null,
              error: null,
              created_at: d.created_at,
              started_at: null,
              finished_at: null,
              next_attempt_at: d.created_at,
              lease_until: null,
            } satisfies SyncRunDoc,
          },
        ];
      }
      case 'sync.run_started':
        // A run starts with its first attempt; later attempts keep that start.
        return update({ status: 'running', next_attempt_at: null, lease_until: event.data.lease_until ?? null, ...(event.data.attempt === 1 ? { started_at: event.data.started_at } : {}) });
      case 'sync.run_lease_renewed':
        return update({ lease_until: event.data.lease_until });
      case 'sync.run_attempt_failed':
        return update({ status: event.data.status, error: event.data.error, next_attempt_at: event.data.next_attempt_at, lease_until: null }, { attempts: 1 });
      case 'sync.run_succeeded':
        return update({ status: 'succeeded', objects_stored: event.data.objects_stored, finished_at: event.data.finished_at, next_attempt_at: null, lease_until: null });
      case 'sync.run_failed':
        return update({ status: 'failed', attempts: event.data.attempts, error: event.data.error, finished_at: event.data.finished_at, next_attempt_at: null, lease_until: null });
      case 'sync.run_cancelled':
        return update({ status: 'cancelled', finished_at: event.data.finished_at, next_attempt_at: null, lease_until: null });
      case 'user.erased':
        return [{ op: 'deleteMany', collection: SYNC_RUNS, filter: { user_id: event.data.user_id } }];
      case 'provider_data.erased':
        return [{ op: 'deleteMany', collection: SYNC_RUNS, filter: { user_id: event.data.user_id, provider: event.data.provider } }];
      default:
        return [];
    }
  },
});
