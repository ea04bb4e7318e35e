import type { UploadEvent } from '../../commands/ingestion/upload.js';
import type { ImportProgress, RecordsRejected } from '../../commands/ingestion/ingestedEvents.js';
import { PROVIDER_DATA_ERASED, USER_ERASED } from '../../src/catalog/eventTypes.js';
import type { ProviderDataErased, UserErased } from '../../commands/deletions/erasureEvents.js';
import { defineProjection } from '../../src/projector/projection.js';
import type { Change } from '../../src/readstore/readStore.js';

export type UploadStatus = 'receiving' | 'accepted' | 'processing' | 'done' | 'failed' | 'parked';

/** contracts §12: one upload's outcome, as `GET …/uploads/{provider}/{upload_id}` answers it. */
export type UploadDoc = {
  /** The upload stream's name. */
  _id: string;
  user_id: string;
  tenant_id: string;
  provider: string;
  upload_id: string;
  bytes: number;
  status: UploadStatus;
  received_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** While processing: the last checkpoint's reading (import.progress). */
  bytes_read: number;
  records_read: number;
  records: Record<string, number>;
  unchanged: number;
  rejected: number;
  error: string | null;
  /** Tus uploads: when an incomplete one expires. */
  expires_at: string | null;
  /**
   * Where in the log the records of this status are: the position of the event that ended the
   * upload, or NOT_FINISHED before that. A final status is shown only once every record view has
   * applied the log up to here (contracts §17; queries/ingestion/uploads.ts), until then the
   * upload answers `processing`. Absent from documents a MongoDB read store kept from before it
   * was recorded (SQLite rebuilds the collection for the new column): those ended long ago.
   */
  finished_position?: number;
};

/** The `finished_position` of an upload still being received, queued or processed: no position of the log is past it. */
export const NOT_FINISHED = Number.MAX_SAFE_INTEGER;

/** The first rejections of an upload (contracts §12 `rejections`: the first 20), one document each. */
export type UploadRejectionDoc = { _id: string; upload: string; user_id: string; provider: string; n: number; at: string; reason: string };

export const UPLOADS = 'uploads';
export const UPLOAD_REJECTIONS = 'upload_rejections';
export const FIRST_REJECTIONS = 20;

/**
 * The outcome of every upload and import (contracts §12), built from the upload stream (its
 * acceptance and ETL job) and the job's ingest stream (checkpoints, rejected lines) only, so a
 * rebuild equals the live model. Device uploads, pulled payloads and imports all have one; the
 * routes list the tier `upload` ones (what a user sent).
 */
export const uploadsProjection = defineProjection<UploadEvent | ImportProgress | RecordsRejected | UserErased | ProviderDataErased>({
  name: UPLOADS,
  collections: [
    {
      name: UPLOADS,
      // The last one: resumable uploads still arriving past their expiry, for the sweep (src/processes/uploads/tusSweep.ts).
      indexes: [{ fields: [['user_id', 1], ['received_at', -1]] }, { fields: [['user_id', 1], ['provider', 1], ['upload_id', 1]] }, { fields: [['status', 1], ['expires_at', 1]] }],
      columns: ['status', 'tenant_id', 'finished_position'],
    },
    { name: UPLOAD_REJECTIONS, indexes: [{ fields: [['upload', 1], ['n', 1]] }, { fields: [['user_id', 1], ['provider', 1]] }] },
  ],
  eventTypes: [
    'upload.receiving',
    'upload.abandoned',
    'upload.accepted',
    'etl.job_started',
    'etl.job_failed',
    'etl.job_parked',
    'etl.job_retried',
    'etl.job_succeeded',
    'etl.job_unreadable',
    'etl.job_discarded',
    'import.progress',
    'records.rejected',
    USER_ERASED,
    PROVIDER_DATA_ERASED,
  ],
  evolve: (event): Change[] => {
    const id = event.streamName;
    const update = (set: Record<string, unknown>, inc?: Record<string, number>): Change[] => [{ op: 'update', collection: UPLOADS, id, set, ...(inc ? { inc } : {}) }];
    switch (event.type) {
      case 'upload.receiving': {
        const d = event.data;
        return [{ op: 'put', collection: UPLOADS, doc: { ...fresh(id, d), status: 'receiving', received_at: d.created_at, expires_at: d.expires_at } satisfies UploadDoc }];
      }
      case 'upload.abandoned':
        return [{ op: 'delete', collection: UPLOADS, id }];
      case 'upload.accepted': {
        const d = event.data;
        if (d.tier !== 'upload') return [];
        // A resumable upload keeps the time it began arriving (setOnInsert); a single request is received now.
        return [
          {
            op: 'update',
            collection: UPLOADS,
            id,
            upsert: true,
            set: { status: 'accepted', bytes: d.bytes, expires_at: null },
            setOnInsert: { ...fresh(id, d), received_at: d.accepted_at },
          },
        ];
      }
      case 'etl.job_started':
        return update({ status: 'processing', started_at: event.data.started_at, error: null });
      case 'etl.job_failed':
        // Retried after its backoff: waiting again, like a fresh upload (the error shows once it parks).
        return update({ status: 'accepted' });
      case 'etl.job_parked':
        return update({ status: 'parked', error: event.data.error, finished_at: event.data.parked_at, finished_position: event.globalPosition });
      case 'etl.job_retried':
        return update({ status: 'accepted', error: null, finished_at: null, finished_position: NOT_FINISHED });
      case 'etl.job_succeeded':
      case 'etl.job_unreadable': {
        const d = event.data;
        const failed = event.type === 'etl.job_unreadable';
        return update({
          status: failed ? 'failed' : 'done',
          finished_at: d.finished_at,
          records: d.records,
          rejected: d.rejected,
          unchanged: d.unchanged ?? 0,
          error: failed ? (d as { error: string }).error : null,
          finished_position: event.globalPosition,
        });
      }
      case 'etl.job_discarded':
        return update({ status: 'failed', finished_at: event.data.at, error: event.data.reason, finished_position: event.globalPosition });
      case 'import.progress': {
        const d = event.data;
        return [{ op: 'update', collection: UPLOADS, id: d.job, set: { bytes_read: d.bytes_read, records_read: d.items, records: d.records, rejected: d.rejected, unchanged: d.unchanged } }];
      }
      case 'records.rejected': {
        const d = event.data;
        // Rejected items are numbered within the upload by their order (runEtlJob keys them so); the first 20 are kept.
        // (Items stored before they were numbered count from their place in the job's first batch.)
        return d.items.flatMap((item, i) => {
          const n = item.n ?? (d.batch === 0 ? i : FIRST_REJECTIONS);
          if (n >= FIRST_REJECTIONS) return [];
          const doc: UploadRejectionDoc = { _id: `${d.job}|${n}`, upload: d.job, user_id: d.user_id, provider: d.provider, n, at: item.location, reason: item.reason };
          return [{ op: 'put' as const, collection: UPLOAD_REJECTIONS, doc }];
        });
      }
      case 'user.erased':
        return [
          { op: 'deleteMany', collection: UPLOADS, filter: { user_id: event.data.user_id } },
          { op: 'deleteMany', collection: UPLOAD_REJECTIONS, filter: { user_id: event.data.user_id } },
        ];
      case 'provider_data.erased':
        return [
          { op: 'deleteMany', collection: UPLOADS, filter: { user_id: event.data.user_id, provider: event.data.provider } },
          { op: 'deleteMany', collection: UPLOAD_REJECTIONS, filter: { user_id: event.data.user_id, provider: event.data.provider } },
        ];
      default:
        return [];
    }
  },
});

function fresh(id: string, d: { user_id: string; tenant_id: string; provider: string; upload_id: string; bytes: number }): Omit<UploadDoc, 'status' | 'received_at' | 'expires_at'> {
  return {
    _id: id,
    user_id: d.user_id,
    tenant_id: d.tenant_id,
    provider: d.provider,
    upload_id: d.upload_id,
    bytes: d.bytes,
    started_at: null,
    finished_at: null,
    bytes_read: 0,
    records_read: 0,
    records: {},
    unchanged: 0,
    rejected: 0,
    error: null,
    finished_position: NOT_FINISHED,
  };
}
