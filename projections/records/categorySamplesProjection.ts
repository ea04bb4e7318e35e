import type { RecordsIngested } from '../../commands/ingestion/ingestedEvents.js';
import type { CategoryRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { ownedFields, utcDay, type RecordDocBase } from './recordDoc.js';
import { recordId, recordKey } from './recordIds.js';

export type CategorySampleDoc = Omit<CategoryRecord, 'kind'> & RecordDocBase;

/** Category samples (sleep stages, menstrual flow, mindful sessions, …), one row per record. */
export const categorySamplesProjection = defineProjection<RecordsIngested<CategoryRecord>>({
  name: 'category_samples',
  collections: [
    {
      name: 'category_samples',
      indexes: [
        // List of one type, and the merged view's neighbourhood (user, type, start range).
        { fields: [['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]] },
        // List of every type.
        { fields: [['user_id', 1], ['start_date', 1], ['id', 1]] },
        { fields: [['user_id', 1], ['day', 1]] },
      ],
    },
  ],
  eventTypes: ['category_samples.ingested'],
  evolve: (event) => {
    const d = event.data;
    return d.records.map((r, i): Change => {
      const { kind: _kind, ...fields } = r;
      return {
        op: 'update',
        collection: 'category_samples',
        id: recordKey(d.user_id, d.provider, r.external_id),
        upsert: true,
        set: { ...fields, ...ownedFields(d, utcDay(r.start_date)) },
        setOnInsert: { id: recordId(event.globalPosition, i) },
      };
    });
  },
});
