import type { Filter, ReadStore } from '../../src/readstore/readStore.js';
import { uploadStream } from '../../commands/ingestion/upload.js';
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

async function resourceOf(readStore: ReadStore, d: UploadDoc): Promise<UploadResource> {
  const rejections = d.rejected === 0 ? [] : await readStore.find<UploadRejectionDoc>(UPLOAD_REJECTIONS, { filter: { upload: d._id }, sort: [['n', 1]], limit: FIRST_REJECTIONS });
  return {
    upload_id: d.upload_id,
    provider: d.provider,
    bytes: d.bytes,
    status: d.status,
    received_at: d.received_at,
    started_at: d.started_at,
    finished_at: d.finished_at,
    // While it is processing (contracts §12): what its last checkpoint read.
    progress: d.status === 'processing' ? { bytes_read: d.bytes_read, bytes_total: d.bytes, records_read: d.records_read } : null,
    records: d.records,
    unchanged: d.unchanged,
    rejected: d.rejected,
    rejections: rejections.map((r) => ({ at: r.at, reason: r.reason })),
    error: d.error,
  };
}

/** A user's uploads, newest first (contracts §12). */
export async function listUploads(readStore: ReadStore, q: ListUploads, page: PageRequest) {
  const filter: Filter = { user_id: q.userId, ...(q.provider !== undefined ? { provider: q.provider } : {}), ...(q.status !== undefined ? { status: q.status } : {}) };
  const found = await findPage<UploadDoc>(readStore, UPLOADS, { filter, sort: [['received_at', -1]] }, page);
  return { items: await Promise.all(found.items.map((d) => resourceOf(readStore, d))), next: found.next };
}

/**
 * One upload of a user by provider and Upload-Id: the newest of that name (a name is reused only
 * after the provider's data was erased, which removed the older one). Null when absent.
 */
export async function getUpload(readStore: ReadStore, userId: string, provider: string, uploadId: string): Promise<UploadResource | null> {
  const [doc] = await readStore.find<UploadDoc>(UPLOADS, { filter: { user_id: userId, provider, upload_id: uploadId }, sort: [['received_at', -1]], limit: 1 });
  return doc ? resourceOf(readStore, doc) : null;
}

/** The upload of a stream (its name is the document's id). */
export async function getUploadByStream(readStore: ReadStore, userId: string, provider: string, uploadId: string, generation: number): Promise<UploadResource | null> {
  const doc = await readStore.get<UploadDoc>(UPLOADS, uploadStream(userId, provider, uploadId, generation));
  return doc ? resourceOf(readStore, doc) : null;
}
