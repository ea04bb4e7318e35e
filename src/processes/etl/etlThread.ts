/**
 * Entry of an ETL pool thread (`etlPool.ts`): runs claimed jobs, reading, parsing and
 * appending with its own connections to the stores, so that normalising a large upload never
 * blocks the thread that answers HTTP. The stores are opened once and kept for the thread's
 * life; the pool asks every thread to close them before it is destroyed.
 */
import { BroadcastChannel, workerData } from 'node:worker_threads';
import { dataKeysOf } from '../../app/dataKeysOf.js';
import { etlParsers, importDecoders } from '../../sources/registry.js';
import { openRecordLedger } from '../../app/openRecordLedger.js';
import { openEtlStores } from './etlStores.js';
import type { EtlControlMessage, EtlThreadData } from './etlPool.js';
import { BULK_UPLOAD_BYTES, importTempDir, runEtlTask, type EtlRunOutcome, type EtlTask } from './etlTask.js';
import { SmallJobsFirst } from './smallJobsFirst.js';
import { openCheckpointReader, ProjectorPacing, projectorPositions } from './projectorPacing.js';
import { recordProjections } from '../../../projections/index.js';

const { config, control } = workerData as EtlThreadData;
const channel = new BroadcastChannel(control);
// The ledger of stored records (contracts §13 `unchanged`) on the configured backend, opened with the stores.
// The checkpoints a bulk job is paced by (projectorPacing.ts), read through a read store of its own, when pacing is on.
const opening = Promise.all([openEtlStores(config), openRecordLedger(config), config.etlBulkProjectorLead > 0 ? openCheckpointReader(config) : null]).then(([s, ledger, checkpoints]) => ({ ...s, ledger, checkpoints }));
let closing = false;
channel.onmessage = (m) => {
  if ((m as { data: EtlControlMessage }).data !== 'close' || closing) return;
  closing = true;
  void opening
    .then(async (s) => {
      await s.eventStore.close();
      await s.rawStore.close();
      await s.ledger.close();
      await s.checkpoints?.close();
    })
    // Stores that failed to open have nothing to close; the pool is answered either way.
    .catch(() => {})
    .finally(() => {
      channel.postMessage('closed' satisfies EtlControlMessage);
      channel.close();
    });
};
const stores = await opening;

const dataKeys = dataKeysOf(config, stores.eventStore);
const decoders = importDecoders(importTempDir(config.dataDir));

const order = new SmallJobsFirst();

const positions = stores.checkpoints ? projectorPositions(stores.eventStore, stores.checkpoints, recordProjections) : null;

export default function run(task: EtlTask): Promise<EtlRunOutcome> {
  const deps = { ...stores, parsers: etlParsers, importDecoders: decoders, dataKeys };
  // The lanes' rule (etlWorker.ts): a bulk job, also one retried in the small lane, lets this thread's small jobs go first,
  // and never runs more than ETL_BULK_PROJECTOR_LEAD appends ahead of the record projections (contracts §18).
  if (task.upload.bytes >= BULK_UPLOAD_BYTES) {
    const pacing = positions ? new ProjectorPacing(positions, { lead: config.etlBulkProjectorLead }) : null;
    return runEtlTask({ ...deps, pause: async () => (await order.yieldToSmall(), await pacing?.beforeAppend()) }, task);
  }
  return order.small(() => runEtlTask(deps, task));
}
