import { join } from 'node:path';
import { ensureDataDir } from './dataDir.js';
import type { Config } from '../config.js';
import type { RecordLedger } from '../recordledger/recordLedger.js';

/**
 * The configured backend's record ledger (contracts §13 `unchanged`): `DATA_DIR/record-ledger.sqlite`
 * on the embedded default, the `_record_ledger` collection of the read store's database on MongoDB
 * (sharing the process's MongoClient), as `openWorkQueue` picks the queue.
 */
export async function openRecordLedger(config: Config): Promise<RecordLedger> {
  if (config.backend.kind === 'production') {
    const { MongoRecordLedger } = await import('../recordledger/mongoRecordLedger.js');
    return MongoRecordLedger.connect({ url: config.backend.mongodbUrl, database: config.backend.mongodbDatabase });
  }
  ensureDataDir(config.dataDir);
  const { SqliteRecordLedger } = await import('../recordledger/sqliteRecordLedger.js');
  return new SqliteRecordLedger(join(config.dataDir, 'record-ledger.sqlite'));
}
