import type { NutritionRecord } from '../../commands/ingestion/records.js';
import { utcDay, type RecordDocBase } from './recordDoc.js';
import { defineRecordProjection } from './recordProjection.js';

export type NutritionDoc = Omit<NutritionRecord, 'kind'> & RecordDocBase;

/** Nutrition logs (a meal, a food or a drink), one row per record. */
export const nutritionProjection = defineRecordProjection<NutritionRecord>({
  collection: 'nutrition',
  eventType: 'nutrition.ingested',
  indexes: [{ fields: [['user_id', 1], ['start_date', 1], ['id', 1]] }, { fields: [['user_id', 1], ['day', 1]] }],
  day: (r) => utcDay(r.start_date),
});
