import { TIER_PRIORITY, type UploadEvent } from '../../commands/ingestion/upload.js';
import { PROVIDER_DATA_ERASED, USER_ERASED } from '../../src/catalog/eventTypes.js';
import type { ProviderDataErased, UserErased } from '../../commands/deletions/erasureEvents.js';
import { defineProjection } from '../../src/projector/projection.js';

export type EtlJobDoc = {
  _id: string;
  /** Global position of the upload's acceptance: a stable integer id. */
  id: number;
  user_id: string;
  tenant_id: string;
  provider: string;
  tier: string;
  tier_priority: number;
  status: EtlJobStatus;
  /**
   * The status's class (`jobPhase`): what the indexes led by a tenant or a user hold in place of
   * the status, so a job's start (pending → running) leaves them as they are (issue 37).
   */
  phase: EtlJobPhase;
  attempts: number;
  error: string | null;
  created_at: string;
  next_attempt_at: string | null;
  lease_until: string | null;
  finished_at: string | null;
  records: Record<string, number> | null;
  /**
   * UTC day of the latest record the job stored (`data.written`'s last_day): set only on a job
   * that stored records. Freshness finds the provider's latest records from it.
   */
  last_day: string | null;
};

export type EtlJobStatus = 'pending' | 'running' | 'parked' | 'done';
/** `open`: waiting or running (what back-pressure counts); `parked` and `done` as the status. */
export type EtlJobPhase = 'open' | 'parked' | 'done';

export function jobPhase(status: EtlJobStatus): EtlJobPhase {
  return status === 'pending' || status === 'running' ? 'open' : status;
}

/** The filter of a user's or a tenant's open jobs (waiting or running), on their phase's index. */
export const OPEN_JOBS = { phase: 'open' } as const;

/**
 * The ETL queue as workers and GET /v1/pipeline/etl-jobs see it.
 *
 * Each status change rewrote every index that holds the status; a one-line upload's job changes
 * it twice (started, then done). The indexes led by the tenant and by the user hold the status's
 * class instead (`phase`), which the start does not change: those are the indexes whose leaves are
 * scattered (one user's jobs are far from the next upload's), so an upload's job writes two fewer
 * entries there (issue 37; docs/decisions.md "The ETL jobs' phase"). The status stays first in the
 * sweep's index: the sweep asks for pending and running jobs apart.
 */
export const etlJobsProjection = defineProjection<UploadEvent | UserErased | ProviderDataErased>({
  name: 'etl_jobs',
  collections: [
    {
      name: 'etl_jobs',
      indexes: [
        { fields: [['status', 1], ['next_attempt_at', 1]] },
        { fields: [['tenant_id', 1], ['phase', 1], ['id', -1]] },
        { fields: [['user_id', 1], ['phase', 1]] },
      ],
      // 2: `phase` (documents without it cannot be read by phase; MongoDB's are recreated too).
      version: 2,
      // finished_at and last_day: freshness takes their maximum per provider (queries/users/getFreshness.ts).
      columns: ['lease_until', 'provider', 'finished_at', 'last_day'],
    },
  ],
  eventTypes: ['upload.accepted', 'etl.job_started', 'etl.job_failed', 'etl.job_parked', 'etl.job_retried', 'etl.job_succeeded', 'etl.job_discarded', 'data.written', USER_ERASED, PROVIDER_DATA_ERASED],
  evolve: (event) => {
    const id = event.streamName;
    const update = (set: Record<string, unknown>) => [{ op: 'update' as const, collection: 'etl_jobs', id, set }];
    switch (event.type) {
      case 'upload.accepted': {
        const d = event.data;
        return [
          {
            op: 'put',
            collection: 'etl_jobs',
            doc: {
              _id: id,
              id: event.globalPosition,
              user_id: d.user_id,
              tenant_id: d.tenant_id,
              provider: d.provider,
              tier: d.tier,
              tier_priority: TIER_PRIORITY[d.tier],
              status: 'pending',
              phase: 'open',
              attempts: 0,
              error: null,
              created_at: d.accepted_at,
              next_attempt_at: d.accepted_at,
              lease_until: null,
              finished_at: null,
              records: null,
              last_day: null,
            },
          },
        ];
      }
      case 'etl.job_started':
        return update({ status: 'running', lease_until: event.data.lease_until });
      case 'etl.job_failed':
        return update({ status: 'pending', attempts: event.data.attempt, error: event.data.error, next_attempt_at: event.data.next_attempt_at, lease_until: null });
      case 'etl.job_parked':
        return update({ status: 'parked', phase: 'parked', attempts: event.data.attempt, error: event.data.error, next_attempt_at: null, lease_until: null });
      case 'etl.job_retried':
        return update({ status: 'pending', phase: 'open', attempts: 0, next_attempt_at: event.data.at });
      case 'etl.job_succeeded':
        return update({ status: 'done', phase: 'done', lease_until: null, next_attempt_at: null, finished_at: event.data.finished_at, records: event.data.records });
      case 'etl.job_discarded':
        return update({ status: 'done', phase: 'done', lease_until: null, next_attempt_at: null, finished_at: event.data.at, error: event.data.reason });
      case 'data.written':
        return update({ last_day: event.data.last_day });
      case 'user.erased':
        return [{ op: 'deleteMany', collection: 'etl_jobs', filter: { user_id: event.data.user_id } }];
      case 'provider_data.erased':
        return [{ op: 'deleteMany', collection: 'etl_jobs', filter: { user_id: event.data.user_id, provider: event.data.provider } }];
      default:
        return [];
    }
  },
});
