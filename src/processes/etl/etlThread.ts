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
import { IMPORT_DECODER_LOADERS, loadEtlParser } from '../../sources/sourceLoaders.js';
import type { ImportDecoder } from '../../sources/files/importSource.js';
import { openRecordLedger } from '../../app/openRecordLedger.js';
import { openCheckpointReader, openEtlStores } from './etlStores.js';
import { transientKind } from '../../shared/transientErrors.js';
import type { EtlThreadData, EtlThreadReply, EtlThreadRequest } from './etlThreadHandle.js';
import { BULK_UPLOAD_BYTES, importTempDir, runEtlTask, type EtlRunOutcome, type EtlTask } from './etlTask.js';
import { SmallJobsFirst } from './smallJobsFirst.js';
import { ProjectorPacing, projectorPositions } from './projectorPacing.js';

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
// Only the sources this thread's jobs need are loaded (sourceLoaders.ts): a bulk job's thread
// evaluated every source's modules before, ~300 ms of CPU per thread.
const decoders: Record<string, ImportDecoder> = {};
const parsers: Record<string, DeviceParser> = { ...testParsers };
const loading = new Map<string, Promise<void>>();
function loadSource(slug: string): Promise<void> {
  if (Object.hasOwn(parsers, slug) || Object.hasOwn(decoders, slug)) return Promise.resolve();
  let load = loading.get(slug);
  if (!load) {
    load = (async () => {
      if (Object.hasOwn(IMPORT_DECODER_LOADERS, slug)) decoders[slug] = (await IMPORT_DECODER_LOADERS[slug]!())(importTempDir(config.dataDir));
      else {
        const parser = await loadEtlParser(slug);
        if (parser) parsers[slug] = parser;
      }
    })();
    loading.set(slug, load);
    // A failed load is tried again by the next job of the slug.
    load.catch(() => loading.delete(slug));
  }
  return load;
}

const order = new SmallJobsFirst();

// The record projections a bulk job is paced by, imported at the first bulk job: every projection's
// module, ~60 ms of CPU at each thread start otherwise (issue 37).
const recordViews = () => import('../../../projections/index.js').then((m) => m.recordProjections);

async function run(task: EtlTask): Promise<EtlRunOutcome> {
  await loadSource(task.upload.provider);
  const deps = { ...stores, parsers, importDecoders: decoders, dataKeys };
  // The lanes' rule (etlWorker.ts): a bulk job runs on a thread of its own (etlPool.ts), lets any
  // small job of its thread go first, and never runs more than ETL_BULK_PROJECTOR_LEAD appends
  // ahead of the record projections (contracts §18, projectorPacing.ts).
  if (task.upload.bytes >= BULK_UPLOAD_BYTES) {
    const pacing = stores.checkpoints ? new ProjectorPacing(projectorPositions(stores.eventStore, stores.checkpoints, await recordViews()), { lead: config.etlBulkProjectorLead }) : null;
    return runEtlTask({ ...deps, pause: async () => (await order.yieldToSmall(), await pacing?.beforeAppend()) }, task);
  }
  return order.small(() => runEtlTask(deps, task));
}

post({ type: 'ready' });
