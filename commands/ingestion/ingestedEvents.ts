import type { Event } from '../../src/eventstore/eventStore.js';
import type { NormalizedRecord, RejectedItem } from './records.js';

/**
 * One batch of normalised records of one kind from one ETL job. The event type names the kind
 * (`samples.ingested`, `workouts.ingested`, …) so each projection subscribes to its own. A batch
 * holds at most MAX_RECORDS_PER_EVENT records and MAX_EVENT_JSON_BYTES of JSON (records.ts).
 */
export type RecordsIngestedData<R extends NormalizedRecord = NormalizedRecord> = {
  job: string;
  user_id: string;
  tenant_id: string;
  provider: string;
  /** When the service received the payload; the same on every re-run of the job. */
  ingested_at: string;
  /** 0-based number of this kind's batch within the job. */
  batch: number;
  records: R[];
};
export type RecordsIngested<R extends NormalizedRecord = NormalizedRecord> = Event<string, RecordsIngestedData<R>>;

/** `n`: the item's 0-based number among the upload's rejected items (absent on events stored before it was kept). */
export type RecordsRejected = Event<
  'records.rejected',
  { job: string; user_id: string; tenant_id: string; provider: string; batch: number; items: (RejectedItem & { key: string; n?: number })[]; at: string }
>;

/**
 * The stream of an ETL job's output; prefixed by user so erasure can find it. Its events (every
 * kind, in the order the job cut them) sit at revisions a re-run of the job reproduces.
 */
export const ingestStream = (userId: string, uploadStreamName: string) => `ingest-${userId}-${uploadStreamName.slice(-32)}`;

/**
 * A checkpoint of an ETL run (contracts §13 "resumes after a crash from its last checkpoint"),
 * appended after every CHECKPOINT_ITEMS items the decoder yielded, once every open batch before it
 * was stored: a re-run skips the first `items` items and carries on from these tallies at this
 * event's revision. It is also the upload's `progress` (contracts §12). Counts only: no health value.
 */
export type ImportProgress = Event<
  'import.progress',
  {
    job: string;
    user_id: string;
    tenant_id: string;
    provider: string;
    /** Items (records and rejections) the decoder yielded up to here. */
    items: number;
    bytes_read: number;
    bytes_total: number;
    records: Record<string, number>;
    rejected: number;
    unchanged: number;
    types: string[];
    first_day: string | null;
    last_day: string | null;
    /** Batches appended so far per kind (and `rejected`): the next batch numbers. */
    batches: Record<string, number>;
    at: string;
  }
>;
