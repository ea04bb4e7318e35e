import type { RecordsIngested } from '../../commands/ingestion/ingestedEvents.js';
import type { DailySummaryRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { ownedFields, type RecordDocBase } from './recordDoc.js';
import { recordId, recordKey } from './recordIds.js';

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
export const dailySummariesProjection = defineProjection<RecordsIngested<DailySummaryRecord>>({
  name: 'daily_summaries',
  collections: [
    {
      name: 'daily_summaries',
      indexes: [
        { fields: [['user_id', 1], ['date', 1], ['id', 1]] },
        // The merged view's neighbourhood.
        { fields: [['user_id', 1], ['day_start', 1]] },
        { fields: [['user_id', 1], ['day', 1]] },
      ],
    },
  ],
  eventTypes: ['daily_summaries.ingested'],
  evolve: (event) => {
    const d = event.data;
    return d.records.map((r, i): Change => {
      const { kind: _kind, ...fields } = r;
      return {
        op: 'update',
        collection: 'daily_summaries',
        id: recordKey(d.user_id, d.provider, r.external_id),
        upsert: true,
        set: { ...fields, day_start: dayStartOf(r.date), ...ownedFields(d, r.date) },
        setOnInsert: { id: recordId(event.globalPosition, i) },
      };
    });
  },
});
