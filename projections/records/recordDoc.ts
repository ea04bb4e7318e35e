import type { QualityFlag } from '../../src/catalog/qualityFlags.js';
import type { Change } from '../../src/readstore/readStore.js';
import type { RecordsIngestedData } from '../../commands/ingestion/ingestedEvents.js';

/**
 * Fields every stored record row carries besides its own: its owner (user and tenant, the keys
 * of every read and of erasure), when the service received it, and the UTC day it falls on
 * (coverage counts records per provider and day).
 */
export type OwnedFields = {
  user_id: string;
  tenant_id: string;
  /** UTC date (YYYY-MM-DD) of the record's start; a daily summary's own date. */
  day: string;
  ingested_at: string;
};

/**
 * A stored record: natural key as `_id`, the integer id it got from the event that first stored
 * it, and for the kinds with a merged view `hidden` (a better ranked source has a matching record).
 */
export type RecordDocBase = OwnedFields & {
  _id: string;
  id: number;
  hidden?: boolean;
  /** The record's quality flags (contracts §15); rows stored before them lack it. */
  quality?: QualityFlag[];
  /** True when a flag leaves the record out of the merged view and statistics. */
  excluded?: boolean;
};

export const ownedFields = (d: Pick<RecordsIngestedData, 'user_id' | 'tenant_id' | 'ingested_at'>, day: string): OwnedFields => ({
  user_id: d.user_id,
  tenant_id: d.tenant_id,
  day,
  ingested_at: d.ingested_at,
});

/** The provenance a record's child rows (a night's phases, a workout's route points) repeat. */
export const childProvenance = (r: { provider: string; source: string; device: string | null }) => ({ provider: r.provider, source: r.source, device: r.device });

/** A record's child rows replaced: the rows its earlier version had go, each new row is put. */
export function replaceChildren(collection: string, parent: Readonly<Record<string, string>>, docs: readonly ({ _id: string } & Record<string, unknown>)[]): Change[] {
  return [{ op: 'deleteMany', collection, filter: parent }, ...docs.map((doc): Change => ({ op: 'put', collection, doc }))];
}

/** UTC date of an RFC 3339 UTC time as records carry it (`toISOString()`). */
export const utcDay = (iso: string): string => iso.slice(0, 10);

/** The UTC date of an instant (epoch ms), and the instant a UTC date starts. */
export const utcDayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const dayStartMs = (day: string): number => Date.parse(`${day}T00:00:00Z`);
