import type { RecordsIngested } from '../../commands/ingestion/ingestedEvents.js';
import type { MenstrualCycleRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { ownedFields, type RecordDocBase } from './recordDoc.js';
import { recordId, recordKey } from './recordIds.js';

export type MenstrualCycleDoc = Omit<MenstrualCycleRecord, 'kind'> & RecordDocBase;

/** Menstrual cycles; a re-sent cycle (its period ended, the next one began) updates in place. */
export const menstrualCyclesProjection = defineProjection<RecordsIngested<MenstrualCycleRecord>>({
  name: 'menstrual_cycles',
  collections: [
    {
      name: 'menstrual_cycles',
      indexes: [{ fields: [['user_id', 1], ['start_date', 1], ['id', 1]] }, { fields: [['user_id', 1], ['day', 1]] }],
    },
  ],
  eventTypes: ['menstrual_cycles.ingested'],
  evolve: (event) => {
    const d = event.data;
    return d.records.map((r, i): Change => {
      const { kind: _kind, ...fields } = r;
      return {
        op: 'update',
        collection: 'menstrual_cycles',
        id: recordKey(d.user_id, d.provider, r.external_id),
        upsert: true,
        // start_date is already a calendar date (YYYY-MM-DD).
        set: { ...fields, ...ownedFields(d, r.start_date) },
        setOnInsert: { id: recordId(event.globalPosition, i) },
      };
    });
  },
});
