import type { QuantityRecord } from '../../commands/ingestion/records.js';
import type { Projection } from '../../src/projector/projection.js';
import type { Change } from '../../src/readstore/readStore.js';
import { withMergedView } from './mergedView/mergedFlags.js';
import { utcDay } from './recordDoc.js';
import { defineRecordsProjection, recordUpsert } from './recordProjection.js';
import { SAMPLE_KEY_RUNS } from './sampleBlocks/recentLocators.js';
import { SAMPLE_BLOCKS, SAMPLE_KEYS, userLocators } from './sampleBlocks/sampleBlock.js';
import { SAMPLE_ROLLUPS } from './sampleRollups/dayRollup.js';
import { DAY_COUNT_FIELD, HOURS_FIELD, QUARTERS_FIELD } from './sampleRollups/rollupLayout.js';
import { SAMPLES, samplesKind } from './sampleRollups/samplesDerivation.js';

export type { SampleDoc } from './sampleBlocks/sampleBlock.js';

/**
 * Evolve says what a batch does to the samples, one upsert of the unstored collection `samples`
 * per record (the record's fields, its owner fields and day, its id when first stored), as every
 * record kind does; the merged view's derivation takes those upserts and packs the samples into
 * blocks (sampleBlocks/blockSession.ts, docs/sample-blocks.md). Erasure deletes blocks and
 * locators by user, or by user and provider: every block and every run of recent locators holds
 * one provider's samples, and a locator's `_id` starts with its user's tag (userLocators).
 */
const records = defineRecordsProjection<QuantityRecord>({
  name: SAMPLES,
  eventType: 'samples.ingested',
  collections: [
    {
      name: SAMPLE_BLOCKS,
      // Pages, statistics and the merged view's neighbours name the user and the type, then a day
      // or a time; erasure filters (user, provider), which the first field narrows to one user's blocks.
      indexes: [{ fields: [['user_id', 1], ['type', 1], ['day', 1], ['start_min', 1], ['_id', 1]] }],
      // `data` as a column of its own: in the JSON rest every quote of it would be escaped.
      columns: ['tenant_id', 'provider', 'source', 'start_max', 'count', 'listed', 'data'],
      // 3: `data` packs a field of objects by key (the samples' metadata; sampleBlock.ts `g`), which
      // an older reader cannot decode. 2: a block carries `listed` (the merged view skips blocks
      // with none); a store of version 1 (undeclared) is rebuilt from the log on first start, as
      // blocks without it cannot be filtered.
      version: 3,
    },
    {
      name: SAMPLE_KEYS,
      // The locators packed (sampleBlocks/packedLocators.ts): key rows (a (user, provider)'s record
      // keys with their ids, in order) and id rows (a storing event's ids with their block
      // families), every `_id` starting with the user's tag. The ingest and a read by id seek
      // `_id`s; an erasure deletes the user's range of them (with `provider` for a provider's).
      indexes: [],
      columns: ['provider', 'data'],
      // 3: packed rows instead of a row per sample; a store of version 2 is rebuilt from the log on
      // first start (docs/sample-blocks.md "Migration"). 2: `_id` is the user's tag and the record
      // key's first 16 characters, no `user_id`; 1 (undeclared) had `user_id`.
      version: 3,
    },
    {
      name: SAMPLE_KEY_RUNS,
      // The locators' recent tier (sampleBlocks/recentLocators.ts): runs in append order, merged
      // into sample_keys now and then. A read by id names the user and an id within a run's range;
      // an erasure filters `user_id` (and `provider`), as for any record row. A store written
      // before the tier has none: every locator in sample_keys, which is what an empty tier means.
      indexes: [{ fields: [['user_id', 1], ['id_min', 1]] }],
      columns: ['provider', 'id_max', 'count', 'data'],
      version: 1,
    },
  ],
  erasedRowsIn: {
    [SAMPLE_KEYS]: (userId, provider) => (provider === undefined ? userLocators(userId) : { ...userLocators(userId), provider }),
  },
  evolve: (event, sequence) => {
    // A loop, not a callback made per event: V8 optimises this function once (blockSession.ts).
    const records = event.data.records;
    const out: Change[] = [];
    for (let i = 0; i < records.length; i++) {
      const { kind: _kind, ...fields } = records[i]!;
      out.push(recordUpsert(event, sequence, SAMPLES, i, fields, utcDay(fields.start_date)));
    }
    return out;
  },
});

/**
 * Quantity samples (steps, heart rate, body mass, …) packed into blocks, with the merged view's
 * flag on each sample and the statistics rollups of every day (sampleRollups/), all kept in one
 * transaction per batch. The user's source order comes with `source_priorities.set`.
 */
export const samplesProjection: Projection = {
  ...withMergedView(records, samplesKind, [
    {
      name: SAMPLE_ROLLUPS,
      // 4: the samples moved into blocks (a store of version 3 is rebuilt from the log on first
      // start, docs/sample-blocks.md "Migration"); 3: a packed field names its day (joined fields
      // read alone, ReadStore.joinBytes), and the day's hours are packed beside its quarters;
      // 2: a day's statistics packed into `quarters` (issue 38); 1 (undeclared) had a column per stat group.
      version: 4,
      // Statistics read a window's rows with one range of the first (user, type, view, day), and group them by series.
      indexes: [{ fields: [['user_id', 1], ['type', 1], ['view', 1], ['day', 1], ['_id', 1]] }, { fields: [['user_id', 1], ['view', 1], ['day', 1]] }],
      columns: ['provider', 'source', 'unit', 'last_ingested_at', 'flagged', DAY_COUNT_FIELD, QUARTERS_FIELD, HOURS_FIELD],
    },
  ]),
  // One row per sample, before blocks.
  retired: [SAMPLES],
};
