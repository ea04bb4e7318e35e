import type { RecordsIngested } from '../../commands/ingestion/ingestedEvents.js';
import type { ObservationRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { ownedFields, utcDay, type RecordDocBase } from './recordDoc.js';
import { recordId, recordKey } from './recordIds.js';

export type ObservationDoc = Omit<ObservationRecord, 'kind'> & RecordDocBase;

/** Multi-component observations (blood pressure, blood glucose, …), read later by the FHIR view. */
export const observationsProjection = defineProjection<RecordsIngested<ObservationRecord>>({
  name: 'observations',
  collections: [
    {
      name: 'observations',
      indexes: [
        { fields: [['user_id', 1], ['code', 1], ['start_date', 1], ['id', 1]] },
        { fields: [['user_id', 1], ['start_date', 1], ['id', 1]] },
        { fields: [['user_id', 1], ['day', 1]] },
      ],
    },
  ],
  eventTypes: ['observations.ingested'],
  evolve: (event) => {
    const d = event.data;
    return d.records.map((r, i): Change => {
      const { kind: _kind, ...fields } = r;
      return {
        op: 'update',
        collection: 'observations',
        id: recordKey(d.user_id, d.provider, r.external_id),
        upsert: true,
        set: { ...fields, ...ownedFields(d, utcDay(r.start_date)) },
        setOnInsert: { id: recordId(event.globalPosition, i) },
      };
    });
  },
});
