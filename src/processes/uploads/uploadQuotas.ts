import { statfs } from 'node:fs/promises';
import { UPLOADS } from '../../../projections/ingestion/uploadsProjection.js';
import type { ReadStore } from '../../readstore/readStore.js';

/** contracts §18 (docs/formats/uploads.md "Quotas"): TUS_OPEN_PER_USER, TUS_STAGED_BYTES_PER_TENANT, DISK_FREE_FLOOR_BYTES. */
export type UploadQuotaSettings = { openPerUser: number; stagedBytesPerTenant: number; diskFreeFloorBytes: number };

/** Why a creation is refused: the status (429 user, 413 tenant, 507 disk) and a detail for the client. */
export type QuotaRefusal = { status: 429 | 413 | 507; detail: string };

/** Bytes the file system holding `dir` still gives an unprivileged writer. */
export async function freeBytesUnder(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/**
 * Whether one more resumable upload of `length` bytes may be created for the user and tenant
 * (contracts §18). Counted from the `uploads` read model, which every service process sharing the
 * store sees: the user's and the tenant's uploads still `receiving` and not past their expiry (an
 * expired one can no longer be resumed; the sweep abandons it within its round). The caller holds
 * the tenant's creation lock and settles the read model after creating, so two creations never
 * count the same room. Both queries are bounded without the caller's help: the user's count is an
 * index range; the tenant's sum scans only uploads still receiving, of which each user has at most
 * `openPerUser`. The checks come in the order of the spec's sentence: the user's count, the
 * tenant's bytes, the disk.
 */
export async function quotaRefusal(
  readStore: ReadStore,
  dataDir: string,
  settings: UploadQuotaSettings,
  who: { tenantId: string; userId: string },
  length: number,
  now = new Date(),
): Promise<QuotaRefusal | null> {
  const live = { status: 'receiving', expires_at: { $gt: now.toISOString() } };
  const open = await readStore.count(UPLOADS, { ...live, user_id: who.userId });
  if (open >= settings.openPerUser) {
    return {
      status: 429,
      detail: `the user has ${open} incomplete resumable uploads, the most allowed (TUS_OPEN_PER_USER ${settings.openPerUser}): finish or terminate one first`,
    };
  }
  const [row] = await readStore.aggregate(UPLOADS, { filter: { ...live, tenant_id: who.tenantId }, groupBy: ['tenant_id'], sum: ['bytes'], limit: 1 });
  const staged = row?.sum.bytes ?? 0;
  if (staged + length > settings.stagedBytesPerTenant) {
    return {
      status: 413,
      detail: `the tenant's incomplete resumable uploads declare ${staged} bytes; ${length} more would pass the ${settings.stagedBytesPerTenant} allowed (TUS_STAGED_BYTES_PER_TENANT)`,
    };
  }
  const free = await freeBytesUnder(dataDir);
  if (free < settings.diskFreeFloorBytes) {
    return { status: 507, detail: `the service's disk has ${free} bytes free, below its floor of ${settings.diskFreeFloorBytes} (DISK_FREE_FLOOR_BYTES): try again later` };
  }
  return null;
}
