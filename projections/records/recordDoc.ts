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
export const utcDayOf = (ms: number): string => dateOfDayNumber(Math.floor(ms / 86_400_000));

/** Two digits of a date or time part (0–99). */
export const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * `YYYY-MM-DD` of a day number (days since 1970-01-01), as `toISOString` writes it, by arithmetic
 * (the civil calendar from a day count): statistics write one per day and interval of an answer,
 * and a Date and its ISO string cost several times this. Years outside 0000–9999 go to Date.
 */
export function dateOfDayNumber(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1_460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  if (y < 0 || y > 9999) return new Date(day * 86_400_000).toISOString().slice(0, -14);
  return `${y < 1000 ? String(y).padStart(4, '0') : y}-${pad2(m)}-${pad2(d)}`;
}
export const dayStartMs = (day: string): number => Date.parse(`${day}T00:00:00Z`);
