import { createHmac } from 'node:crypto';
import type { NormalizedRecord } from '../../../commands/ingestion/records.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import { FINGERPRINT_BYTES, JOB_TAG_BYTES, MAX_LEDGER_BATCH, type RecordLedger } from '../../recordledger/recordLedger.js';

/**
 * What makes two records the same stored record (contracts §13 `unchanged`). For samples the
 * contract's fields (type, start, end, value, unit, source); for the other kinds everything they
 * hold but the id the source gave them and their metadata. Always a JSON array or object.
 */
export function recordIdentity(r: NormalizedRecord): string {
  if (r.kind === 'quantity') return JSON.stringify(['quantity', r.type, r.start_date, r.end_date, r.value, r.unit, r.source]);
  if (r.kind === 'category') return JSON.stringify(['category', r.type, r.start_date, r.end_date, r.value, r.source]);
  const { external_id: _id, metadata: _m, ...rest } = r as NormalizedRecord & { metadata?: unknown };
  return JSON.stringify(rest);
}

/** One job's view of the ledger (`ledgerOf`). */
export type JobLedger = ReturnType<typeof ledgerOf>;

/**
 * One job's view of the ledger. Fingerprints and the job's tag are HMACs under a key derived from
 * the data key of the user's provider data (docs/erasure.md): the ledger's rows name no user, job
 * or value, and once the key is destroyed (the user deleted, the provider's data erased) nothing
 * can match or read them; a later generation has another key, so its uploads match none of them.
 * The user and provider are in each fingerprint's input too: one ledger serves every user.
 *
 * A block of records (recordBlocks.ts) has a fingerprint of the same kind under the same key: the
 * scope, then `block`, then its records' identities one a line. A record's input continues after
 * the scope with its identity, a JSON array or object, so no block's input is ever a record's.
 */
export function ledgerOf(ledger: RecordLedger, dataKey: Buffer, upload: UploadAccepted['data'], job: string) {
  const key = createHmac('sha256', dataKey).update('record-ledger').digest();
  const tag = createHmac('sha256', key).update(`job\u0000${job}`).digest().subarray(0, JOB_TAG_BYTES);
  const scope = `${upload.user_id}\u0000${upload.provider}\u0000`;
  const fingerprintOf = (identity: string) => createHmac('sha256', key).update(scope + identity).digest().subarray(0, FINGERPRINT_BYTES);
  // The fingerprint a record was noted under, so that its commit does not compute it again.
  const noted = new WeakMap<NormalizedRecord, Buffer>();
  const fingerprints = (records: readonly NormalizedRecord[], identities?: readonly string[]) =>
    records.map((r, i) => {
      let fp = noted.get(r);
      if (!fp) noted.set(r, (fp = fingerprintOf(identities?.[i] ?? recordIdentity(r))));
      return fp;
    });
  const inBatches = async <T>(fps: readonly Buffer[], call: (part: Buffer[]) => Promise<T[] | void>): Promise<T[]> => {
    const out: T[] = [];
    for (let i = 0; i < fps.length; i += MAX_LEDGER_BATCH) out.push(...((await call(fps.slice(i, i + MAX_LEDGER_BATCH))) ?? []));
    return out;
  };
  const note = (fps: readonly Buffer[]): Promise<boolean[]> => inBatches(fps, (part) => ledger.note(tag, part));
  return {
    /**
     * One answer per record, in order: true when another upload's append stored it; the rest are
     * claimed as this job's. `identities`, when given, are the records' `recordIdentity`s.
     */
    known: (records: readonly NormalizedRecord[], identities?: readonly string[]): Promise<boolean[]> =>
      note(fingerprints(records, identities)),
    /**
     * These records (claimed by this job) are durably in the log: from now on other uploads count
     * them `unchanged`; so are every record of these blocks (`blockFingerprint`), the same.
     */
    stored: async (records: readonly NormalizedRecord[], blocks: readonly Buffer[] = []): Promise<void> => {
      await inBatches([...fingerprints(records), ...blocks], (part) => ledger.commit(tag, part));
    },
    /** The fingerprint of a block: its records' identities, in order. */
    blockFingerprint: (identities: readonly string[]): Buffer => {
      const h = createHmac('sha256', key).update(`${scope}block`);
      for (const id of identities) h.update(`\n${id}`);
      return h.digest().subarray(0, FINGERPRINT_BYTES);
    },
    /** As `known`, for blocks' fingerprints: true when another upload committed the block (every record of it was in the log). */
    knownBlocks: note,
  };
}
