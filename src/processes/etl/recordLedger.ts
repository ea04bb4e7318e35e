import { createHmac } from 'node:crypto';
import type { NormalizedRecord } from '../../../commands/ingestion/records.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import { FINGERPRINT_BYTES, JOB_TAG_BYTES, MAX_LEDGER_BATCH, type RecordLedger } from '../../recordledger/recordLedger.js';

/**
 * What makes two records the same stored record (contracts §13 `unchanged`). For samples the
 * contract's fields (type, start, end, value, unit, source); for the other kinds everything they
 * hold but the id the source gave them and their metadata.
 */
export function recordIdentity(r: NormalizedRecord): string {
  if (r.kind === 'quantity') return JSON.stringify(['quantity', r.type, r.start_date, r.end_date, r.value, r.unit, r.source]);
  if (r.kind === 'category') return JSON.stringify(['category', r.type, r.start_date, r.end_date, r.value, r.source]);
  const { external_id: _id, metadata: _m, ...rest } = r as NormalizedRecord & { metadata?: unknown };
  return JSON.stringify(rest);
}

/**
 * One job's view of the ledger. Fingerprints and the job's tag are HMACs under a key derived from
 * the data key of the user's provider data (docs/erasure.md): the ledger's rows name no user, job
 * or value, and once the key is destroyed (the user deleted, the provider's data erased) nothing
 * can match or read them; a later generation has another key, so its uploads match none of them.
 * The user and provider are in each fingerprint's input too: one ledger serves every user.
 */
export function ledgerOf(ledger: RecordLedger, dataKey: Buffer, upload: UploadAccepted['data'], job: string) {
  const key = createHmac('sha256', dataKey).update('record-ledger').digest();
  const tag = createHmac('sha256', key).update(`job\u0000${job}`).digest().subarray(0, JOB_TAG_BYTES);
  const scope = `${upload.user_id}\u0000${upload.provider}\u0000`;
  const fingerprints = (records: readonly NormalizedRecord[]) =>
    records.map((r) => createHmac('sha256', key).update(scope + recordIdentity(r)).digest().subarray(0, FINGERPRINT_BYTES));
  return {
    /** One answer per record, in order: true when another upload's append stored it; the rest are claimed as this job's. */
    known: (records: readonly NormalizedRecord[]): Promise<boolean[]> => ledger.note(tag, fingerprints(records)),
    /** These records (claimed by this job) are durably in the log: from now on other uploads count them `unchanged`. */
    stored: async (records: readonly NormalizedRecord[]): Promise<void> => {
      for (let i = 0; i < records.length; i += MAX_LEDGER_BATCH) await ledger.commit(tag, fingerprints(records.slice(i, i + MAX_LEDGER_BATCH)));
    },
  };
}
