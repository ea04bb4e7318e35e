import type { RecordsIngested } from '../../commands/ingestion/ingestedEvents.js';
import type { QuantityRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { recordId, recordKey } from './recordIds.js';

export type SampleDoc = Omit<QuantityRecord, 'kind'> & {
  _id: string;
  id: number;
  user_id: string;
  tenant_id: string;
  /** UTC day of start_date, for coverage. */
  day: string;
  ingested_at: string;
};

export const samplesProjection = defineProjection<RecordsIngested<QuantityRecord>>({
  name: 'samples',
  collections: [
    {
      name: 'samples',
      indexes: [
        { fields: [['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]] },
        { fields: [['user_id', 1], ['day', 1]] },
        { fields: [['id', 1]] },
      ],
    },
  ],
  eventTypes: ['samples.ingested'],
  evolve: (event) => {
    const d = event.data;
    return d.records.map((r, i): Change => {
      const { kind: _kind, ...fields } = r;
      return {
        op: 'update',
        collection: 'samples',
        id: recordKey(d.user_id, d.provider, r.external_id),
        upsert: true,
        set: { ...fields, user_id: d.user_id, tenant_id: d.tenant_id, day: r.start_date.slice(0, 10), ingested_at: d.ingested_at },
        setOnInsert: { id: recordId(event.globalPosition, i) },
      };
    });
  },
});
