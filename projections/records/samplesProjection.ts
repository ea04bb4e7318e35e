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
  day: (r) => utcDay(r.start_date),
});
