import type { QuantityRecord } from '../../commands/ingestion/records.js';
import { utcDay, type RecordDocBase } from './recordDoc.js';
import { defineRecordProjection } from './recordProjection.js';

export type SampleDoc = Omit<QuantityRecord, 'kind'> & RecordDocBase;

/** Quantity samples (steps, heart rate, body mass, …), one row per record. */
export const samplesProjection = defineRecordProjection<QuantityRecord>({
  collection: 'samples',
  eventType: 'samples.ingested',
  indexes: [
    { fields: [['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]] },
    { fields: [['user_id', 1], ['day', 1]] },
  ],
  // Every scalar field of the record: a million rows of them stay small.
  columns: ['value', 'unit', 'end_date', 'source_name', 'source_bundle_id', 'device_model', 'product_type', 'was_user_entered'],
  booleans: ['was_user_entered'],
  day: (r) => utcDay(r.start_date),
});
