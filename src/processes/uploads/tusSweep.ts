import { abandonUpload } from '../../../commands/ingestion/receiveUpload.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import type { UploadDoc } from '../../../projections/ingestion/uploadsProjection.js';
import { StreamDeletedError, type EventStore } from '../../eventstore/eventStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import type { UploadStaging } from '../../rawstore/uploadStaging.js';
import { uploadLockName, type UploadLocks } from './uploadLocks.js';

/** Expired uploads abandoned per round at most, oldest expiry first; the next round takes the rest. */
export const SWEEP_UPLOADS = 100;
/** Staged folders looked at per round at most; the walk goes on from there in the next round. */
export const SWEEP_FOLDERS = 1_000;
/**
 * Bytes arrived this recently mean a PATCH is still running (it began before the expiry, which the
 * route checks at the start of each request): its upload is left to the next round.
 */
export const ACTIVE_WRITE_MS = 10 * 60_000;
/** A staged folder with no upload left to finish is removed once its last bytes are older than the expiry and this. */
export const ORPHAN_MARGIN_MS = 24 * 3_600_000;

export type TusSweepDeps = {
  eventStore: EventStore;
  readStore: ReadStore;
  staging: UploadStaging;
  /** The uploads' locks (shared with the tus routes): an upload a request holds is left to the next round. */
  locks: UploadLocks;
  /** How long an upload may take to arrive (IMPORT_UPLOAD_EXPIRY_HOURS). */
  expiryMs: number;
};

export type TusSweepResult = { expired: number; orphans: number };

/**
 * Resumable uploads (contracts §13, tus expiration) that were never completed, cleaned up in the
 * background instead of only when next asked for: each round abandons up to SWEEP_UPLOADS uploads
 * the `uploads` read model shows `receiving` past their `expires_at` (`upload.abandoned`, reason
 * `expired`: the row leaves the list) and removes their staged bytes; then it walks up to
 * SWEEP_FOLDERS staged folders and removes those whose last bytes are older than the expiry and a
 * margin: an upload that can no longer be finished (completed, terminated or abandoned by a
 * request that crashed before removing them, or of a user deleted meanwhile, whose bytes are sealed
 * under a destroyed key). The sweep keeps its place in the folder walk from one round to the next.
 */
export function tusSweep(deps: TusSweepDeps): { run(now?: number): Promise<TusSweepResult> } {
  let place = 0;
  return {
    async run(now = Date.now()) {
      const expired = await abandonExpired(deps, now);
      let looked = 0;
      let orphans = 0;
      for await (const dir of deps.staging.walk(place, SWEEP_FOLDERS)) {
        looked++;
        if (dir.lastWrite < now - deps.expiryMs - ORPHAN_MARGIN_MS) {
          await deps.staging.removeDir(dir.path);
          orphans++;
        }
      }
      // A round that met fewer folders than it could reached the end: the next starts over.
      place = looked < SWEEP_FOLDERS ? 0 : place + looked - orphans;
      return { expired, orphans };
    },
  };
}

async function abandonExpired(deps: TusSweepDeps, now: number): Promise<number> {
  const due = await deps.readStore.find<UploadDoc>('uploads', {
    filter: { status: 'receiving', expires_at: { $lte: new Date(now).toISOString() } },
    sort: [['expires_at', 1]],
    limit: SWEEP_UPLOADS,
  });
  let expired = 0;
  for (const doc of due) {
    const lastWrite = await deps.staging.lastWrite(doc.user_id, doc._id);
    if (lastWrite !== null && lastWrite > now - ACTIVE_WRITE_MS) continue;
    // A PATCH, DELETE or acceptance holding the upload (in any process) finishes first.
    const lock = await deps.locks.take(uploadLockName(doc._id));
    if (!lock) continue;
    try {
      if (await abandonOne(deps, doc, now)) expired++;
    } finally {
      await lock.release();
    }
  }
  return expired;
}

async function abandonOne(deps: TusSweepDeps, doc: UploadDoc, now: number): Promise<boolean> {
  try {
    await abandonUpload(deps.eventStore, doc._id, 'expired', new Date(now));
  } catch (err) {
    // Completed meanwhile (its last PATCH won): processing owns its bytes now.
    if (err instanceof DomainError && err.code === 'conflict') return false;
    // Its user or provider data was erased: only the staged bytes are left.
    if (!(err instanceof StreamDeletedError)) throw err;
  }
  await deps.staging.remove(doc.user_id, doc._id);
  return true;
}
