import type { RecordsIngested } from '../../commands/ingestion/ingestedEvents.js';
import type { NormalizedRecord } from '../../commands/ingestion/records.js';
import { PROVIDER_DATA_ERASED, USER_ERASED } from '../../src/catalog/eventTypes.js';
import type { ProviderDataErased, UserErased } from '../../commands/deletions/erasureEvents.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { defineProjection, type Projection } from '../../src/projector/projection.js';
import type { Change, CollectionSpec, Filter, IndexSpec, UpdateChange } from '../../src/readstore/readStore.js';
import { qualityFlagsOf } from '../../commands/ingestion/recordQuality.js';
import { leavesOut } from '../../src/catalog/qualityFlags.js';
import { ownedFields } from './recordDoc.js';
import { recordId, recordKey } from './recordIds.js';

/** A batch of records of one kind, as evolve receives it. */
export type IngestedEvent<R extends NormalizedRecord> = RecordedEvent<RecordsIngested<R>>;

/**
 * Fields of every record row, besides the kind's own index fields, that embedded stores keep as
 * columns: what the merged view, statistics and coverage filter, group or compare on, and the
 * provenance every row carries (a column stores a value without repeating its name per row).
 * `hidden` is the merged view's flag, kept by the kinds that have one (mergedView/mergedFlags.ts);
 * `excluded` says the record's quality flags leave it out of the merged view and statistics
 * (contracts §15), so coverage counts them without reading the flags of every row.
 */
export const RECORD_COLUMNS = ['provider', 'source', 'body_worn', 'ingested_at', 'external_id', 'device', 'tenant_id', 'hidden', 'excluded'] as const;
export const RECORD_BOOLEANS = ['body_worn', 'hidden', 'excluded'] as const;

type Erasure = UserErased | ProviderDataErased;
const isErasure = (event: RecordedEvent<RecordsIngested | Erasure>): event is RecordedEvent<Erasure> => event.type === USER_ERASED || event.type === PROVIDER_DATA_ERASED;

/** The rows an erasure drops: all of the user's, or those of the user and one provider (every row carries both). */
export const erasedRows = (event: RecordedEvent<Erasure>): Filter =>
  event.type === PROVIDER_DATA_ERASED ? { user_id: event.data.user_id, provider: event.data.provider } : { user_id: event.data.user_id };

/** erasedRows, or the collection's own filter of the erased user's (and provider's) rows. */
const erasedRowsOf = (event: RecordedEvent<Erasure>, own: ((userId: string, provider: string | undefined) => Filter) | undefined): Filter => {
  if (!own) return erasedRows(event);
  const provider = event.type === PROVIDER_DATA_ERASED ? event.data.provider : undefined;
  return own(event.data.user_id, provider);
};

/**
 * The upsert that stores the `index`-th record of an ingested batch: keyed by its natural key
 * (`recordKey(user, provider, external_id)`), `set` to its own `fields` (which carry its
 * external_id) followed by the owner fields and `day`, and given `recordId(sequence, index)`
 * only when first stored. The change's `id` is the record's key, for the rows hung below it.
 * `fields` must be a copy the caller made for this change: the owner fields are added to it.
 */
export function recordUpsert<R extends NormalizedRecord>(
  event: IngestedEvent<R>,
  sequence: number,
  collection: string,
  index: number,
  fields: { external_id: string } & Record<string, unknown>,
  day: string,
): UpdateChange & { id: string } {
  const d = event.data;
  // `fields` is the caller's own fresh copy of the record: the owner fields go into it directly.
  const set: Record<string, unknown> = Object.assign(fields, ownedFields(d, day));
  // The flags the event carries; an event stored before they existed is flagged here, against
  // its own receipt time, so live and rebuild agree either way (contracts §15).
  const record = d.records[index]!;
  const quality = record.quality ?? qualityFlagsOf(record, d.ingested_at);
  set.quality = quality;
  set.excluded = leavesOut(quality);
  return {
    op: 'update',
    collection,
    id: recordKey(d.user_id, d.provider, fields.external_id),
    upsert: true,
    set,
    setOnInsert: { id: recordId(sequence, index) },
  };
}

/**
 * A projection of one record kind over any number of collections (a parent row per record and
 * the rows hung below it). `evolve` handles the kind's `*.ingested` events, which are numbered in
 * the projection's sequence (their records' ids come from it); the erasures are handled here for
 * every collection in `collections`: on `user.erased` each deletes the user's rows, on
 * `provider_data.erased` the user's rows of that provider (so every row must carry `user_id` and
 * `provider`, and every collection should be indexed by `user_id` first, unless `erasedRowsIn`
 * says how its rows are found).
 */
export function defineRecordsProjection<R extends NormalizedRecord>(p: {
  name: string;
  eventType: string;
  collections: readonly CollectionSpec[];
  evolve: (event: IngestedEvent<R>, sequence: number) => readonly Change[];
  /**
   * Collections whose rows find their owner another way than by `user_id` and `provider` fields
   * (the samples' locators, sampleBlock.ts): the filter of an erasure's rows there.
   */
  erasedRowsIn?: Readonly<Record<string, (userId: string, provider: string | undefined) => Filter>>;
}): Projection {
  return defineProjection<RecordsIngested<R> | Erasure>({
    name: p.name,
    collections: p.collections,
    eventTypes: [p.eventType, USER_ERASED, PROVIDER_DATA_ERASED],
    sequenced: (event) => event.type === p.eventType,
    evolve: (event, sequence) =>
      isErasure(event)
        ? p.collections.map((c): Change => ({ op: 'deleteMany', collection: c.name, filter: erasedRowsOf(event, p.erasedRowsIn?.[c.name]) }))
        : p.evolve(event as IngestedEvent<R>, sequence),
  });
}

/**
 * A projection that stores each record of one kind as one row of one collection, named after
 * the projection: the record without its `kind`, then `extraFields` (derived ones), then the
 * owner fields with the record's `day`.
 */
export function defineRecordProjection<R extends NormalizedRecord>(p: {
  /** The projection's name and its collection's. */
  collection: string;
  eventType: string;
  indexes: readonly IndexSpec[];
  /** Fields besides RECORD_COLUMNS and the index fields that queries filter or sort on. */
  columns?: readonly string[];
  /** Those of `columns` that hold booleans. */
  booleans?: readonly string[];
  /** The UTC date (YYYY-MM-DD) the record falls on. */
  day: (record: R) => string;
  extraFields?: (record: R) => Record<string, unknown>;
}): Projection {
  return defineRecordsProjection<R>({
    name: p.collection,
    eventType: p.eventType,
    collections: [{ name: p.collection, indexes: p.indexes, columns: [...RECORD_COLUMNS, ...(p.columns ?? [])], booleans: [...RECORD_BOOLEANS, ...(p.booleans ?? [])] }],
    evolve: (event, sequence) =>
      event.data.records.map((r, i) => {
        const { kind: _kind, ...fields } = r;
        return recordUpsert(event, sequence, p.collection, i, p.extraFields ? Object.assign(fields, p.extraFields(r)) : fields, p.day(r));
      }),
  });
}
