import type { Event } from '../../src/eventstore/eventStore.js';
import { sha256Hex } from '../../src/shared/secrets.js';
import type { StreamState } from '../shared/commandHandler.js';

/**
 * One stream per upload (user, device slug, Upload-Id). It holds the upload's acceptance and its
 * ETL job's whole life, so claiming a job is an optimistic-concurrency append on this stream.
 * The job's integer id is the global position of `upload.accepted`.
 */
export type UploadAccepted = Event<
  'upload.accepted',
  {
    upload_id: string;
    user_id: string;
    tenant_id: string;
    provider: string;
    object_key: string;
    sha256: string;
    bytes: number;
    content_type: string;
    tier: EtlTier;
    accepted_at: string;
    token_id: string;
    /**
     * The generation of the user's data of this provider the upload belongs to: its raw payload
     * and its records are sealed with that generation's data key (docs/erasure.md). Absent on
     * uploads accepted before data keys existed (generation 0, raw payload stored in the clear).
     */
    key_generation?: number;
    /** A pulled or pushed payload's data type (ParseContext.dataType); absent on device uploads. */
    data_type?: string;
    /**
     * The IANA zone the uploader named (`Upload-Time-Zone`, tus `tz`; contracts §17), canonical,
     * for exports whose local times carry no offset: kept on the acceptance so that every run of
     * the job (a retry, a resumed run) reads the times in the same zone. Absent when none was named.
     */
    time_zone?: string;
    /**
     * A small payload itself, sealed, base64 (`object_key` is then `inline:<sha256>`): kept here
     * instead of in the raw store, so that accepting it is one durable write (issue 37;
     * src/rawstore/inlinePayload.ts). It goes with the upload's stream on erasure.
     */
    inline_payload?: string;
  }
>;
export type EtlTier = 'upload' | 'sync' | 'backfill';

const INLINE_PREFIX = 'inline:';

/** The `object_key` of a payload kept in its acceptance (`inline_payload`), named by its digest as sent: never a raw store's key. */
export const inlineKey = (sha256: string): string => `${INLINE_PREFIX}${sha256}`;

export const isInlineKey = (key: string): boolean => key.startsWith(INLINE_PREFIX);
export const TIER_PRIORITY: Record<EtlTier, number> = { upload: 0, sync: 1, backfill: 2 };

export type EtlJobStarted = Event<'etl.job_started', { user_id: string; tenant_id: string; attempt: number; worker: string; started_at: string; lease_until: string }>;
export type EtlJobFailed = Event<
  'etl.job_failed',
  { user_id: string; tenant_id: string; attempt: number; error: string; failed_at: string; next_attempt_at: string }
>;
export type EtlJobParked = Event<'etl.job_parked', { user_id: string; tenant_id: string; attempt: number; error: string; parked_at: string }>;
export type EtlJobRetried = Event<'etl.job_retried', { user_id: string; tenant_id: string; by: string; at: string }>;
export type EtlJobSucceeded = Event<
  'etl.job_succeeded',
  {
    user_id: string;
    tenant_id: string;
    provider: string;
    attempt: number;
    records: Record<string, number>;
    rejected: number;
    /** Records the upload held that an earlier upload of the provider had stored (contracts §13); absent before it was counted. */
    unchanged?: number;
    finished_at: string;
  }
>;
/**
 * The upload as a whole cannot be read as its format (an export whose archive or database turns
 * out unreadable once processed): retrying would give the same answer, so the job ends here and
 * the upload is `failed` (contracts §12). What was read before the verdict stays stored.
 */
export type EtlJobUnreadable = Event<
  'etl.job_unreadable',
  {
    user_id: string;
    tenant_id: string;
    provider: string;
    attempt: number;
    error: string;
    records: Record<string, number>;
    rejected: number;
    unchanged: number;
    finished_at: string;
  }
>;
/**
 * A resumable upload was created (contracts §13, tus creation): its bytes are arriving into
 * `staging_key`. Once the last byte is stored the same stream gets `upload.accepted`.
 */
export type UploadReceiving = Event<
  'upload.receiving',
  {
    upload_id: string;
    user_id: string;
    tenant_id: string;
    provider: string;
    /** Upload-Length: the bytes the upload will hold. */
    bytes: number;
    created_at: string;
    expires_at: string;
    token_id: string;
    key_generation: number;
    /** The tus `tz` named at creation (canonical), handed to the acceptance once the last byte is stored. */
    time_zone?: string;
  }
>;
/** contracts §12: an upload a user sent reached `done`, `failed` or `parked` (the webhook event `upload.finished`). */
export type UploadFinished = Event<
  'upload.finished',
  {
    user_id: string;
    tenant_id: string;
    provider: string;
    upload_id: string;
    status: 'done' | 'failed' | 'parked';
    records: Record<string, number>;
    unchanged: number;
    rejected: number;
    at: string;
  }
>;
/** A resumable upload ended before completion: terminated by its client (tus termination) or expired. */
export type UploadAbandoned = Event<'upload.abandoned', { user_id: string; tenant_id: string; reason: AbandonReason; at: string }>;
/** tus termination, expiration, or a first chunk that cannot be the declared format (refused with 422). */
export type AbandonReason = 'terminated' | 'expired' | 'refused';
export type EtlJobDiscarded = Event<'etl.job_discarded', { user_id: string; tenant_id: string; reason: string; at: string }>;
/** Spec "Events": records were written from stored provider payloads. */
export type DataWritten = Event<
  'data.written',
  {
    user_id: string;
    tenant_id: string;
    provider: string;
    records: Record<string, number>;
    types: string[];
    first_day: string | null;
    last_day: string | null;
  }
>;

export type UploadEvent =
  | UploadAccepted
  | EtlJobStarted
  | EtlJobFailed
  | EtlJobParked
  | EtlJobRetried
  | EtlJobSucceeded
  | EtlJobDiscarded
  | EtlJobUnreadable
  | UploadReceiving
  | UploadAbandoned
  | UploadFinished
  | DataWritten;

/**
 * An Upload-Id names one upload per generation of the user's data of that provider: once that
 * data was erased (its streams tombstoned for good), the same Upload-Id is a new upload.
 */
export const uploadStream = (userId: string, provider: string, uploadId: string, generation = 0) =>
  `upload-${userId}-${sha256Hex(generation === 0 ? `${provider}\u0000${uploadId}` : `${provider}\u0000${uploadId}\u0000${generation}`).slice(0, 32)}`;

export type EtlStatus = 'pending' | 'running' | 'parked' | 'done';

export type UploadState = {
  /** A resumable upload still arriving (or abandoned: `abandoned` set). */
  receiving: UploadReceiving['data'] | null;
  abandoned: boolean;
  accepted: UploadAccepted['data'] | null;
  status: EtlStatus;
  /** Failed attempts since the job was queued or last retried. */
  attempts: number;
  /** Attempt number of the run in progress. */
  attempt: number;
  nextAttemptAt: string | null;
  leaseUntil: string | null;
  error: string | null;
};

export const uploadState: StreamState<UploadState, UploadEvent> = {
  initialState: () => ({ receiving: null, abandoned: false, accepted: null, status: 'pending', attempts: 0, attempt: 0, nextAttemptAt: null, leaseUntil: null, error: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'upload.accepted':
        return { ...state, accepted: event.data, status: 'pending', nextAttemptAt: event.data.accepted_at };
      case 'etl.job_started':
        return { ...state, status: 'running', attempt: event.data.attempt, leaseUntil: event.data.lease_until };
      case 'etl.job_failed':
        return { ...state, status: 'pending', attempts: event.data.attempt, error: event.data.error, nextAttemptAt: event.data.next_attempt_at, leaseUntil: null };
      case 'etl.job_parked':
        return { ...state, status: 'parked', attempts: event.data.attempt, error: event.data.error, nextAttemptAt: null, leaseUntil: null };
      case 'etl.job_retried':
        return { ...state, status: 'pending', attempts: 0, nextAttemptAt: event.data.at };
      case 'upload.receiving':
        return { ...state, receiving: event.data, abandoned: false };
      case 'upload.abandoned':
        return { ...state, abandoned: true };
      case 'etl.job_succeeded':
      case 'etl.job_unreadable':
      case 'etl.job_discarded':
        return { ...state, status: 'done', leaseUntil: null, nextAttemptAt: null };
      default:
        return state;
    }
  },
};
