import type { DailySummaryRecord } from '../../commands/ingestion/records.js';
import type { RecordDocBase } from './recordDoc.js';
import { dailyMergeRule } from '../../src/merge/kindMergeRules.js';
import { withMergedView } from './mergedView/mergedFlags.js';
import { defineRecordProjection } from './recordProjection.js';

export type DailySummaryDoc = Omit<DailySummaryRecord, 'kind'> &
  RecordDocBase & {
    /**
     * Midnight UTC of `date` as an RFC 3339 time: the merged view treats a day total as the
     * interval [day_start, +24 h) and looks up neighbours by this field.
     */
    day_start: string;
  };

export const dayStartOf = (date: string): string => `${date}T00:00:00.000Z`;

/** Daily summaries, one per provider, user and calendar date (re-sent ones update). */
export const dailySummariesProjection = withMergedView(
  defineRecordProjection<DailySummaryRecord>({
    collection: 'daily_summaries',
    eventType: 'daily_summaries.ingested',
    indexes: [
      { fields: [['user_id', 1], ['date', 1], ['id', 1]] },
      // The merged view's neighbourhood.
      { fields: [['user_id', 1], ['day_start', 1]] },
      { fields: [['user_id', 1], ['day', 1]] },
    ],
    // A summary's day is its own date.
    day: (r) => r.date,
    extraFields: (r) => ({ day_start: dayStartOf(r.date) }),
  }),
  {
    collection: 'daily_summaries',
    startField: 'day_start',
    startOrder: [['day_start', 1]],
    lengthMs: 86_400_000,
    rule: (_, priorities) => dailyMergeRule(priorities),
    ordersCollection: 'daily_summary_source_orders',
  },
);
