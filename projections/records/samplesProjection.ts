import type { QuantityRecord } from '../../commands/ingestion/records.js';
import type { Projection } from '../../src/projector/projection.js';
import { withMergedView } from './mergedView/mergedFlags.js';
import { utcDay, type RecordDocBase } from './recordDoc.js';
import { defineRecordProjection } from './recordProjection.js';
import { SAMPLE_ROLLUPS } from './sampleRollups/dayRollup.js';
import { DAY_COUNT_FIELD, HOURS_FIELD, QUARTERS_FIELD } from './sampleRollups/rollupLayout.js';
import { samplesKind } from './sampleRollups/samplesDerivation.js';

export type SampleDoc = Omit<QuantityRecord, 'kind'> & RecordDocBase;

const records = defineRecordProjection<QuantityRecord>({
  collection: 'samples',
  eventType: 'samples.ingested',
  // One secondary index: every read of samples names the user and the type (pages, statistics,
  // the merged view's neighbours, freshness per type). A (user_id, day) index like the other
  // kinds' cost 64 bytes and about a tenth of the write time per sample (BENCHMARKS.md, issue 27).
  indexes: [{ fields: [['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]] }],
  // Every scalar field of the record: a million rows of them stay small.
  columns: ['value', 'unit', 'end_date', 'source_name', 'source_bundle_id', 'device_model', 'product_type', 'was_user_entered'],
  booleans: ['was_user_entered'],
  day: (r) => utcDay(r.start_date),
});

/**
 * Quantity samples (steps, heart rate, body mass, …), one row per record, with the merged view's
 * flag on each and the statistics rollups of every day (sampleRollups/), all kept in one
 * transaction per batch. The user's source order comes with `source_priorities.set`.
 */
export const samplesProjection: Projection = withMergedView(records, samplesKind, [
  {
    name: SAMPLE_ROLLUPS,
    // 3: a packed field names its day (joined fields read alone, ReadStore.joinBytes), and the day's
    // hours are packed beside its quarters; 2: a day's statistics packed into `quarters` (issue 38);
    // 1 (undeclared) had a column per stat group.
    version: 3,
    // Statistics read a window's rows with one range of the first (user, type, view, day), and group them by series.
    indexes: [{ fields: [['user_id', 1], ['type', 1], ['view', 1], ['day', 1], ['_id', 1]] }, { fields: [['user_id', 1], ['view', 1], ['day', 1]] }],
    columns: ['provider', 'source', 'unit', 'last_ingested_at', 'flagged', DAY_COUNT_FIELD, QUARTERS_FIELD, HOURS_FIELD],
  },
]);
