import type { QuantityRecord } from '../../../../commands/ingestion/records.js';
import { withMergedView } from '../../../../projections/records/mergedView/mergedFlags.js';
import { utcDay } from '../../../../projections/records/recordDoc.js';
import { defineRecordProjection } from '../../../../projections/records/recordProjection.js';
import { samplesProjection } from '../../../../projections/records/samplesProjection.js';
import { SAMPLE_ROLLUPS } from '../../../../projections/records/sampleRollups/dayRollup.js';
import { SAMPLES, samplesKind } from '../../../../projections/records/sampleRollups/samplesDerivation.js';
import type { Projection } from '../../../../src/projector/projection.js';

/**
 * The samples projection as it was before blocks (issue 38), one row per sample in `samples`,
 * built from the same production pieces (defineRecordProjection, withMergedView, the samples
 * kind's rule and rollups) with the merged view's per-row store: the oracle the block model is
 * compared with. Kept under test/ only.
 */
// Without onQuarters too: the model re-evaluates whole days, as the derivation did before a batch
// re-evaluated only the spans it changed (batchSpans.ts), so it stays the oracle of both.
const { session: _blocks, onQuarters: _spans, ...perRowKind } = samplesKind;

const rows = defineRecordProjection<QuantityRecord>({
  collection: SAMPLES,
  eventType: 'samples.ingested',
  indexes: [{ fields: [['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]] }],
  columns: ['value', 'unit', 'end_date', 'source_name', 'source_bundle_id', 'device_model', 'product_type', 'was_user_entered'],
  booleans: ['was_user_entered'],
  day: (r) => utcDay(r.start_date),
});

export const perSampleProjection: Projection = withMergedView(rows, perRowKind, samplesProjection.collections.filter((c) => c.name === SAMPLE_ROLLUPS));
