import type { CategoryRecord } from '../../commands/ingestion/records.js';
import { utcDay, type RecordDocBase } from './recordDoc.js';
import { categoryMergeRule } from '../../src/merge/kindMergeRules.js';
import { withMergedView } from './mergedView/mergedFlags.js';
import { defineRecordProjection } from './recordProjection.js';

export type CategorySampleDoc = Omit<CategoryRecord, 'kind'> & RecordDocBase;

/** Category samples (sleep stages, menstrual flow, mindful sessions, …), one row per record, with the merged view's flag. */
export const categorySamplesProjection = withMergedView(
  defineRecordProjection<CategoryRecord>({
    collection: 'category_samples',
    eventType: 'category_samples.ingested',
    indexes: [
      // List of one type, and the merged view's neighbourhood (user, type, start range).
      { fields: [['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]] },
      // List of every type.
      { fields: [['user_id', 1], ['start_date', 1], ['id', 1]] },
      { fields: [['user_id', 1], ['day', 1]] },
    ],
    // Every scalar field of the record: a million rows of them stay small.
    columns: ['value', 'unit', 'end_date', 'source_name', 'source_bundle_id', 'device_model', 'product_type', 'was_user_entered'],
    booleans: ['was_user_entered'],
    day: (r) => utcDay(r.start_date),
  }),
  {
    collection: 'category_samples',
    partitionField: 'type',
    startField: 'start_date',
    endField: 'end_date',
    rule: categoryMergeRule,
    ordersCollection: 'category_sample_source_orders',
  },
);
