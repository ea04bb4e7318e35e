import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import { CoalescedAppends } from '../../eventstore/coalescedAppends.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import type { ReadStore } from '../../readstore/readStore.js';

/**
 * The stores an ETL thread writes through: the configured event store and raw store, as
 * `openStores` (src/app/stores.ts) opens them, without a read store, which a run never touches.
 * The small jobs a thread runs at once append in the same turns: their appends go as one
 * multi-stream append a turn (coalescedAppends.ts, issue 37).
 */
export async function openEtlStores(config: Config): Promise<{ eventStore: EventStore; rawStore: RawStore }> {
  if (config.backend.kind === 'production') {
    const { KurrentDBEventStore } = await import('../../eventstore/kurrentDBEventStore.js');
    const { GridFsRawStore } = await import('../../rawstore/gridFsRawStore.js');
    return {
      eventStore: new CoalescedAppends(new KurrentDBEventStore({ connectionString: config.backend.eventstoreUrl })),
      rawStore: await GridFsRawStore.connect(config.backend.mongodbUrl, config.backend.mongodbDatabase),
    };
  }
  const { SqliteEventStore } = await import('../../eventstore/sqliteEventStore.js');
  const { FileRawStore } = await import('../../rawstore/fileRawStore.js');
  return {
    eventStore: new CoalescedAppends(new SqliteEventStore({ path: join(config.dataDir, 'events.sqlite') })),
    rawStore: new FileRawStore(join(config.dataDir, 'raw')),
  };
}

/**
 * The read store an ETL thread reads the checkpoints from, when pacing is on (projectorPacing.ts):
 * its own connection (SQLite file, or MongoDB), as `openStores` opens it, only read.
 */
export async function openCheckpointReader(config: Config): Promise<ReadStore> {
  if (config.backend.kind === 'production') {
    const { MongoReadStore } = await import('../../readstore/mongoReadStore.js');
    return MongoReadStore.connect({ url: config.backend.mongodbUrl, database: config.backend.mongodbDatabase });
  }
  const { SqliteReadStore } = await import('../../readstore/sqliteReadStore.js');
  return new SqliteReadStore({ path: join(config.dataDir, 'readmodels.sqlite'), cacheMiB: 1 });
}
