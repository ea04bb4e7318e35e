/**
 * Entry of an ETL worker thread (`etlThreadHandle.ts`, `etlPool.ts`): runs claimed jobs, reading,
 * parsing and appending with its own connections to the stores, so that normalising a large
 * upload never blocks the thread that answers HTTP, and a job that runs too long or needs too much
 * memory can be stopped by ending the thread. The stores are opened once and kept for the
 * thread's life; the pool asks the thread to close them before it ends it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { DeviceParser } from '../../../commands/ingestion/records.js';
import { dataKeysOf } from '../../app/dataKeysOf.js';
import { etlParsers, importDecoders } from '../../sources/registry.js';
import { openRecordLedger } from '../../app/openRecordLedger.js';
import { openCheckpointReader, openEtlStores } from './etlStores.js';
import { transientKind } from '../../shared/transientErrors.js';
import type { EtlThreadData, EtlThreadReply, EtlThreadRequest } from './etlThreadHandle.js';
import { BULK_UPLOAD_BYTES, importTempDir, runEtlTask, type EtlRunOutcome, type EtlTask } from './etlTask.js';
import { SmallJobsFirst } from './smallJobsFirst.js';
import { ProjectorPacing, projectorPositions } from './projectorPacing.js';
import { recordProjections } from '../../../projections/index.js';

const { config, parsersModule } = workerData as EtlThreadData;
const port = parentPort!;
const post = (m: EtlThreadReply) => port.postMessage(m);
// The ledger of stored records (contracts §13 `unchanged`) on the configured backend, opened with the stores.
// The checkpoints a bulk job is paced by (projectorPacing.ts), read through a read store of its own, when pacing is on.
const opening = Promise.all([openEtlStores(config), openRecordLedger(config), config.etlBulkProjectorLead > 0 ? openCheckpointReader(config) : null]).then(([s, ledger, checkpoints]) => ({ ...s, ledger, checkpoints }));
let closing = false;
port.on('message', (m: EtlThreadRequest) => {
  if (m.type === 'run') return void run(m.task).then(
    (outcome) => post({ type: 'done', id: m.id, outcome }),
    (err: unknown) => post({ type: 'error', id: m.id, message: err instanceof Error ? err.message : String(err), transient: transientKind(err) }),
  );
  if (closing) return;
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
    .finally(() => post({ type: 'closed' }));
});
const stores = await opening;
const testParsers = parsersModule ? ((await import(parsersModule)) as { parsers: Record<string, DeviceParser> }).parsers : {};

const dataKeys = dataKeysOf(config, stores.eventStore);
const decoders = importDecoders(importTempDir(config.dataDir));
const parsers = { ...etlParsers, ...testParsers };

const order = new SmallJobsFirst();

const positions = stores.checkpoints ? projectorPositions(stores.eventStore, stores.checkpoints, recordProjections) : null;

function run(task: EtlTask): Promise<EtlRunOutcome> {
  const deps = { ...stores, parsers, importDecoders: decoders, dataKeys };
  // The lanes' rule (etlWorker.ts): a bulk job runs on a thread of its own (etlPool.ts), lets any
  // small job of its thread go first, and never runs more than ETL_BULK_PROJECTOR_LEAD appends
  // ahead of the record projections (contracts §18, projectorPacing.ts).
  if (task.upload.bytes >= BULK_UPLOAD_BYTES) {
    const pacing = positions ? new ProjectorPacing(positions, { lead: config.etlBulkProjectorLead }) : null;
    return runEtlTask({ ...deps, pause: async () => (await order.yieldToSmall(), await pacing?.beforeAppend()) }, task);
  }
  return order.small(() => runEtlTask(deps, task));
}

post({ type: 'ready' });
