/**
 * Entry of an ETL pool thread (`etlPool.ts`): runs claimed jobs, reading, parsing and
 * appending with its own connections to the stores, so that normalising a large upload never
 * blocks the thread that answers HTTP. The stores are opened once and kept for the thread's
 * life; the pool asks every thread to close them before it is destroyed.
 */
import { BroadcastChannel, workerData } from 'node:worker_threads';
import { dataKeysOf } from '../../app/dataKeysOf.js';
import { join } from 'node:path';
import { etlParsers, importDecoders } from '../../sources/registry.js';
import { SqliteRecordLedger } from './recordLedger.js';
import { openEtlStores } from './etlStores.js';
import type { EtlControlMessage, EtlThreadData } from './etlPool.js';
import { importTempDir, runEtlTask, type EtlRunOutcome, type EtlTask } from './etlTask.js';

const { config, control } = workerData as EtlThreadData;
const channel = new BroadcastChannel(control);
const opening = openEtlStores(config);
let closing = false;
channel.onmessage = (m) => {
  if ((m as { data: EtlControlMessage }).data !== 'close' || closing) return;
  closing = true;
  void opening
    .then(async (s) => {
      await s.eventStore.close();
      await s.rawStore.close();
      ledger?.close();
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
// The embedded service keeps which records were stored (contracts §13 `unchanged`) beside its other files.
const ledger = config.backend.kind === 'embedded' ? new SqliteRecordLedger(join(config.dataDir, 'record-ledger.sqlite')) : undefined;

export default function run(task: EtlTask): Promise<EtlRunOutcome> {
  return runEtlTask({ ...stores, parsers: etlParsers, importDecoders: decoders, ...(ledger ? { ledger } : {}), dataKeys }, task);
}
