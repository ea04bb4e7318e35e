import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import { FIRST_REJECTIONS, UPLOAD_REJECTIONS, UPLOADS, type UploadDoc, type UploadRejectionDoc, type UploadStatus } from '../../projections/ingestion/uploadsProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';

/** contracts §12: the Upload resource. */
export type UploadResource = {
  upload_id: string;
  provider: string;
  bytes: number;
  status: UploadStatus;
  received_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: { bytes_read: number; bytes_total: number; records_read: number } | null;
  records: Record<string, number>;
  unchanged: number;
  rejected: number;
  rejections: { at: string; reason: string }[];
  error: string | null;
};

export type ListUploads = { userId: string; provider?: string; status?: UploadStatus };

/**
 * The log position up to which every record view (samples, sleep, workouts, summaries, rejected
 * records…) has applied everything (src/projector/appliedThrough.ts): the records of an upload
 * finished at or before it read back in every view.
 */
export type RecordsApplied = () => Promise<number>;

const FINAL: readonly UploadStatus[] = ['done', 'failed', 'parked'];
const isFinal = (status: UploadStatus | undefined): boolean => status !== undefined && FINAL.includes(status);

/**
 * contracts §17: an upload is `done` (or `failed`, `parked`) only once its records are readable in
 * every view. The ETL's finishing event moves this read model at once, while the record views (on
 * the projector thread, or in another process) may still be applying the records it wrote: until
 * they have passed the finishing event, the upload answers `processing`, with every byte read.
 */
function shownStatus(d: UploadDoc, applied: number): Pick<UploadResource, 'status' | 'finished_at' | 'progress' | 'error'> {
  const final = isFinal(d.status);
  if (final && (d.finished_position ?? 0) <= applied) return { status: d.status, finished_at: d.finished_at, progress: null, error: d.error };
  if (final || d.status === 'processing') {
    // While it is processing (contracts §12): what its last checkpoint read; once the run ended, all of it.
    return { status: 'processing', finished_at: null, progress: { bytes_read: final ? d.bytes : d.bytes_read, bytes_total: d.bytes, records_read: d.records_read }, error: null };
  }
  return { status: d.status, finished_at: d.finished_at, progress: null, error: d.error };
}

async function resourceOf(readStore: ReadStore, d: UploadDoc, applied: number): Promise<UploadResource> {
  const rejections = d.rejected === 0 ? [] : await readStore.find<UploadRejectionDoc>(UPLOAD_REJECTIONS, { filter: { upload: d._id }, sort: [['n', 1]], limit: FIRST_REJECTIONS });
  const shown = shownStatus(d, applied);
  return {
    upload_id: d.upload_id,
    provider: d.provider,
    bytes: d.bytes,
    status: shown.status,
    received_at: d.received_at,
    started_at: d.started_at,
    finished_at: shown.finished_at,
    progress: shown.progress,
    records: d.records,
    unchanged: d.unchanged,
    rejected: d.rejected,
    rejections: rejections.map((r) => ({ at: r.at, reason: r.reason })),
    error: shown.error,
  };
}

/** Where the record views stand, asked only when some upload's answer depends on it. */
async function appliedFor(docs: readonly UploadDoc[], recordsApplied: RecordsApplied): Promise<number> {
  return docs.some((d) => isFinal(d.status)) ? recordsApplied() : 0;
}

/**
 * A user's uploads, newest first (contracts §12), filtered on the status each answers: `processing`
 * also lists the uploads whose records the views are still applying (NOT_FINISHED lies past every
 * position), a final status only those past it (a page may then hold fewer rows than its limit).
 */
export async function listUploads(readStore: ReadStore, recordsApplied: RecordsApplied, q: ListUploads, page: PageRequest) {
  // A filter on what the record views decide reads where they stand first, and shows its rows as of then.
  const first = q.status === 'processing' || isFinal(q.status) ? await recordsApplied() : null;
  const byStatus: Filter =
    q.status === undefined ? {} : q.status === 'processing' ? { status: { $in: ['processing', ...FINAL] }, finished_position: { $gt: first ?? 0 } } : { status: q.status };
  const filter: Filter = { user_id: q.userId, ...(q.provider !== undefined ? { provider: q.provider } : {}), ...byStatus };
  const found = await findPage<UploadDoc>(readStore, UPLOADS, { filter, sort: [['received_at', -1]] }, page);
  const applied = first ?? (await appliedFor(found.items, recordsApplied));
  const items = await Promise.all(found.items.map((d) => resourceOf(readStore, d, applied)));
  return { items: q.status === undefined ? items : items.filter((u) => u.status === q.status), next: found.next };
}

/**
 * One upload of a user by provider and Upload-Id: the newest of that name (a name is reused only
 * after the provider's data was erased, which removed the older one). Null when absent.
 */
export async function getUpload(readStore: ReadStore, recordsApplied: RecordsApplied, userId: string, provider: string, uploadId: string): Promise<UploadResource | null> {
  const [doc] = await readStore.find<UploadDoc>(UPLOADS, { filter: { user_id: userId, provider, upload_id: uploadId }, sort: [['received_at', -1]], limit: 1 });
  return doc ? resourceOf(readStore, doc, await appliedFor([doc], recordsApplied)) : null;
}
