import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import type { RawStore } from '../../rawstore/rawStore.js';

/**
 * The stores an ETL thread writes through: the configured event store and raw store, as
 * `openStores` (src/app/stores.ts) opens them, without a read store, which a run never touches.
 */
export async function openEtlStores(config: Config): Promise<{ eventStore: EventStore; rawStore: RawStore }> {
  if (config.backend.kind === 'production') {
    const { KurrentDBEventStore } = await import('../../eventstore/kurrentDBEventStore.js');
    const { GridFsRawStore } = await import('../../rawstore/gridFsRawStore.js');
    return {
      eventStore: new KurrentDBEventStore({ connectionString: config.backend.eventstoreUrl }),
      rawStore: await GridFsRawStore.connect(config.backend.mongodbUrl, config.backend.mongodbDatabase),
    };
  }
  const { SqliteEventStore } = await import('../../eventstore/sqliteEventStore.js');
  const { FileRawStore } = await import('../../rawstore/fileRawStore.js');
  return {
    eventStore: new SqliteEventStore({ path: join(config.dataDir, 'events.sqlite') }),
    rawStore: new FileRawStore(join(config.dataDir, 'raw')),
  };
}
