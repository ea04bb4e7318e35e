import type { QuantityRecord } from '../../commands/ingestion/records.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import type { SourcePriorities } from '../../src/merge/sourceRanking.js';
import type { Projection } from '../../src/projector/projection.js';
import type { Change } from '../../src/readstore/readStore.js';
import { utcDay, type RecordDocBase } from './recordDoc.js';
import { defineRecordProjection } from './recordProjection.js';
import { SAMPLE_ROLLUPS } from './sampleRollups/dayRollup.js';
import { ROLLUP_STAT_COLUMNS } from './sampleRollups/rollupLayout.js';
import { PRIORITIES_SET, SAMPLE_SOURCE_ORDERS, samplesDerivation } from './sampleRollups/samplesDerivation.js';

/** `hidden`: a better ranked source has a matching sample, so the merged view does not list it. */
export type SampleDoc = Omit<QuantityRecord, 'kind'> & RecordDocBase & { hidden?: boolean };

const records = defineRecordProjection<QuantityRecord>({
  collection: 'samples',
  eventType: 'samples.ingested',
  indexes: [
    { fields: [['user_id', 1], ['type', 1], ['start_date', 1], ['id', 1]] },
    { fields: [['user_id', 1], ['day', 1]] },
  ],
  // Every scalar field of the record: a million rows of them stay small.
  columns: ['value', 'unit', 'end_date', 'source_name', 'source_bundle_id', 'device_model', 'product_type', 'was_user_entered', 'hidden'],
  booleans: ['was_user_entered', 'hidden'],
  day: (r) => utcDay(r.start_date),
});

const derivedCollections = [
  {
    name: SAMPLE_ROLLUPS,
    indexes: [{ fields: [['user_id', 1], ['type', 1], ['view', 1], ['day', 1]] as const }, { fields: [['user_id', 1], ['view', 1], ['day', 1]] as const }],
    columns: ['provider', 'source', 'unit', 'last_ingested_at', ...ROLLUP_STAT_COLUMNS],
  },
  { name: SAMPLE_SOURCE_ORDERS, indexes: [] },
];

/**
 * Quantity samples (steps, heart rate, body mass, …), one row per record, with the merged view's
 * flag on each and the statistics rollups of every day (sampleRollups/), all kept in one
 * transaction per batch. The user's source order comes with `source_priorities.set`.
 */
export const samplesProjection: Projection = {
  ...records,
  collections: [...records.collections, ...derivedCollections],
  eventTypes: [...records.eventTypes, PRIORITIES_SET],
  evolve: (event: RecordedEvent): readonly Change[] => {
    if (event.type === PRIORITIES_SET) {
      const d = event.data as { user_id: string; priorities: SourcePriorities };
      return [{ op: 'put', collection: SAMPLE_SOURCE_ORDERS, doc: { _id: d.user_id, user_id: d.user_id, priorities: d.priorities } }];
    }
    const changes = records.evolve(event);
    if (event.type !== 'user.erased') return changes;
    const userId = (event.data as { user_id: string }).user_id;
    return [...changes, ...derivedCollections.map((c): Change => ({ op: 'deleteMany', collection: c.name, filter: { user_id: userId } }))];
  },
  derive: samplesDerivation,
};
