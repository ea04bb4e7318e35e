import type { MenstrualCycleRecord } from '../../commands/ingestion/records.js';
import type { RecordDocBase } from './recordDoc.js';
import { defineRecordProjection } from './recordProjection.js';

export type MenstrualCycleDoc = Omit<MenstrualCycleRecord, 'kind'> & RecordDocBase;

/** Menstrual cycles; a re-sent cycle (its period ended, the next one began) updates in place. */
export const menstrualCyclesProjection = defineRecordProjection<MenstrualCycleRecord>({
  collection: 'menstrual_cycles',
  eventType: 'menstrual_cycles.ingested',
  indexes: [{ fields: [['user_id', 1], ['start_date', 1], ['id', 1]] }, { fields: [['user_id', 1], ['day', 1]] }],
  // start_date is already a calendar date (YYYY-MM-DD).
  day: (r) => r.start_date,
});
