import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import type { RawStore } from '../../../src/rawstore/rawStore.js';
import { MongoRecordLedger } from '../../../src/recordledger/mongoRecordLedger.js';
import type { RecordLedger } from '../../../src/recordledger/recordLedger.js';
import { SqliteRecordLedger } from '../../../src/recordledger/sqliteRecordLedger.js';
import { tempDir } from '../../support/tmp.js';
import { memoryMongo } from '../../workqueue/memoryMongo.js';

/** The raw store as the ETL reads it: by range (an unsealed object is read as stored). */
export const rawStoreOf = (payload: Buffer): RawStore =>
  ({ kind: 'file', size: async () => payload.length, readRange: (_k: string, s: number, e: number) => Readable.from([payload.subarray(s, e)]) }) as unknown as RawStore;

/** The event store, killed (every append to `stream` refused) after `appends` appends to it: a crash mid-run. */
export function crashingAfter(store: EventStore, stream: string, appends: number): EventStore {
  let n = 0;
  const wrapped: EventStore = Object.create(store);
  wrapped.appendToStream = async (s, events, options) => {
    if (s === stream && n++ >= appends) throw new Error('killed');
    return store.appendToStream(s, events, options);
  };
  return wrapped;
}

/** A device-a upload of user u1, and its job's upload stream. */
export const DEVICE_JOB = `upload-u1-${'ab'.repeat(32)}`;
export const deviceUpload: UploadAccepted['data'] = {
  upload_id: 'up-1',
  user_id: 'u1',
  tenant_id: 't1',
  provider: 'device-a',
  object_key: `u1/${'cd'.repeat(32)}`,
  sha256: 'cd'.repeat(32),
  bytes: 0,
  content_type: 'application/gzip',
  tier: 'upload',
  accepted_at: '2026-03-01T00:00:00.000Z',
  token_id: 'tok-1',
};

/** An Apple Health export upload of `user`. */
export const appleUpload = (user: string): UploadAccepted['data'] => ({
  upload_id: 'export',
  user_id: user,
  tenant_id: 't1',
  provider: 'apple-health',
  object_key: `${user}/${'cd'.repeat(32)}`,
  sha256: 'cd'.repeat(32),
  bytes: 0,
  content_type: 'application/zip',
  tier: 'upload',
  accepted_at: '2026-03-01T00:00:00.000Z',
  token_id: 'tok-1',
});

/** A fresh record ledger on each backend that runs everywhere (issue 21: the production MongoDB ledger's logic, on the in-memory stand-in). */
export const ledgerBackends: [string, () => RecordLedger][] = [
  ['embedded SQLite', () => new SqliteRecordLedger(join(tempDir(), `ledger-${randomUUID()}.sqlite`))],
  ['MongoDB adapter on the in-memory stand-in', () => new MongoRecordLedger(memoryMongo().db)],
];
