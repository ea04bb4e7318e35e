import type { RecordsIngested } from '../../commands/ingestion/ingestedEvents.js';
import type { NutritionRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { ownedFields, utcDay, type RecordDocBase } from './recordDoc.js';
import { recordId, recordKey } from './recordIds.js';

export type NutritionDoc = Omit<NutritionRecord, 'kind'> & RecordDocBase;

/** Nutrition logs (a meal, a food or a drink), one row per record. */
export const nutritionProjection = defineProjection<RecordsIngested<NutritionRecord>>({
  name: 'nutrition',
  collections: [
    {
      name: 'nutrition',
      indexes: [{ fields: [['user_id', 1], ['start_date', 1], ['id', 1]] }, { fields: [['user_id', 1], ['day', 1]] }],
    },
  ],
  eventTypes: ['nutrition.ingested'],
  evolve: (event) => {
    const d = event.data;
    return d.records.map((r, i): Change => {
      const { kind: _kind, ...fields } = r;
      return {
        op: 'update',
        collection: 'nutrition',
        id: recordKey(d.user_id, d.provider, r.external_id),
        upsert: true,
        set: { ...fields, ...ownedFields(d, utcDay(r.start_date)) },
        setOnInsert: { id: recordId(event.globalPosition, i) },
      };
    });
  },
});
