/**
 * Entry of the projector thread: runs the projections it is given with its own connections to
 * the stores, so that applying a million records never blocks the thread that answers HTTP.
 * Reports every committed batch to the parent, which resolves read-your-writes waits from it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { projections } from '../../projections/index.js';
import { createLogger } from '../app/logger.js';
import { openStores } from '../app/stores.js';
import { leaseSettingsOf } from '../app/leaseSettings.js';
import type { Config } from '../config.js';
import { dataKeysOf } from '../app/dataKeysOf.js';
import { OpeningEventStore } from '../crypto/openingEventStore.js';
import { EventOpener } from '../crypto/recordSealing.js';
import { ProjectorRuntime } from './projectorRuntime.js';
import type { Suspect } from './runner.js';
import type { ProjectorThreadMessage } from './threadedRunner.js';

const { config, names, maxChangesPerBatch, leased, suspects } = workerData as { config: Config; names: string[]; maxChangesPerBatch: number; leased: boolean; suspects: Suspect[] };
const port = parentPort!;
const post = (m: ProjectorThreadMessage) => port.postMessage(m);
const log = createLogger(config.logLevel).child({ thread: 'projector' });
const stores = await openStores(config, { readCacheMiB: config.projectorCacheMiB });
// Sealed record events are opened here, with this thread's own view of the data keys.
const runtime = new ProjectorRuntime(
  new OpeningEventStore(stores.eventStore, new EventOpener(dataKeysOf(config, stores.eventStore))),
  stores.readStore,
  projections.filter((p) => names.includes(p.name)),
  log,
  {
    maxChangesPerBatch,
    onBatch: (projection, position) => post({ kind: 'position', projection, position }),
    // The parent's waits follow the positions reported here while this thread applies a projection.
    onApplying: (projection, position) => post({ kind: 'applying', projection, position }),
    // The parent counts a death of this thread against the batches it was told of (threadedRunner.ts).
    onAttempt: (projection, from, through, events) => post({ kind: 'attempt', projection, from, through, events }),
    suspects,
    // The thread holds the leases of its projections itself, with its own connection to the store.
    leases: leased ? leaseSettingsOf(config, stores.readStore, 'projector-thread') : undefined,
    retry: config.projectionRetryDelaysMs ? { delaysMs: config.projectionRetryDelaysMs } : undefined,
  },
);
port.on('message', (m: 'stop') => {
  if (m !== 'stop') return;
  void (async () => {
    await runtime.stop();
    await stores.eventStore.close();
    await stores.readStore.close();
    await stores.rawStore.close();
    post({ kind: 'stopped' });
    port.close();
  })();
});
await runtime.start({ declare: false });
for (const cp of await stores.readStore.listCheckpoints()) {
  if (names.includes(cp.projection)) post({ kind: 'position', projection: cp.projection, position: cp.position });
}
post({ kind: 'ready' });
