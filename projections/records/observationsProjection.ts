import type { ObservationRecord } from '../../commands/ingestion/records.js';
import { utcDay, type RecordDocBase } from './recordDoc.js';
import { defineRecordProjection } from './recordProjection.js';

export type ObservationDoc = Omit<ObservationRecord, 'kind'> & RecordDocBase;

/** Multi-component observations (blood pressure, blood glucose, …), read later by the FHIR view. */
export const observationsProjection = defineRecordProjection<ObservationRecord>({
  collection: 'observations',
  eventType: 'observations.ingested',
  indexes: [
    { fields: [['user_id', 1], ['code', 1], ['start_date', 1], ['id', 1]] },
    { fields: [['user_id', 1], ['start_date', 1], ['id', 1]] },
    { fields: [['user_id', 1], ['day', 1]] },
  ],
  day: (r) => utcDay(r.start_date),
});
