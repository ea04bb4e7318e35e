/**
 * The record ledger (contracts §13 `unchanged`): which records an earlier upload of the same
 * provider and user stored already, so that a newer export holding an older one writes only what
 * is new. The port knows nothing of records or users: callers hand it opaque fingerprints (an HMAC
 * of a record's identity under a key derived from the data key of the user's provider data) and an
 * opaque tag of the job noting them (an HMAC of the job under the same key). A ledger row therefore
 * names no user, job or value: once the data key is destroyed (user deletion, provider erasure),
 * nothing can read or match the rows it left (docs/erasure.md, "The record ledger").
 *
 * A fingerprint counts as stored only once committed: its record was appended to the log, after
 * which nothing takes it out but erasure. A claim of a job that parks or dies before appending
 * stays uncommitted and makes no later upload skip the record (issue 35).
 *
 * Batch-shaped: one call notes many fingerprints, so an adapter answers a batch in one round trip
 * (MongoDB) or one transaction (SQLite).
 */
export interface RecordLedger {
  readonly backend: 'sqlite' | 'mongodb';
  /**
   * Whether the ledger may hold rows written before fingerprints were clustered (issue 38: the
   * caller's fingerprints now begin with a prefix shared by records of one block key, so that a
   * batch touches a few pages of the index instead of one per record). Such rows match only the
   * fingerprints of their older form, which `note` then takes as `unclustered`. A ledger created
   * since holds none, and its callers compute no older form.
   */
  readonly unclusteredRows: boolean;
  /**
   * Answers, in order, true for the fingerprints another job committed (their records are in the
   * log) and `job` never claimed; the others are claimed as `job`'s, uncommitted, and answer false.
   * A job's own claims answer false again, so a run resumed after a crash decides as the first
   * one did (a claim is durable before the records it covers are appended, and a committed row is
   * never undone); another job's claim that is not committed counts for nothing (that job may
   * still park: issue 35), so two uploads of the same records at once may both write them. The
   * same fingerprint twice in one call answers false twice. At most MAX_LEDGER_BATCH a call.
   *
   * `unclustered` (only where `unclusteredRows`): the same records' fingerprints in their older
   * form, one per fingerprint. A fingerprint is then judged by the rows of both forms together
   * (this job's claim of either answers false, else another job's commit of either true), and only
   * its current form is ever claimed.
   */
  note(job: Buffer, fingerprints: readonly Buffer[], unclustered?: readonly Buffer[]): Promise<boolean[]>;
  /**
   * Marks `job`'s claims of these fingerprints committed: called once the records they stand for
   * are durably appended to the log, so that from then on other jobs count them `unchanged`.
   * Fingerprints `job` never claimed are left alone. At most MAX_LEDGER_BATCH a call.
   */
  commit(job: Buffer, fingerprints: readonly Buffer[]): Promise<void>;
  close(): Promise<void>;
}

/** Fingerprints per call at most: the caller cannot make one call hold a whole upload. */
export const MAX_LEDGER_BATCH = 10_000;
/**
 * Bytes of a fingerprint (issue 38: 11, 20 before; the caller's layout in
 * src/processes/etl/recordLedger.ts) and of a job tag (truncated HMAC-SHA-256).
 *
 * A fingerprint is 3 bytes of an HMAC of the record's block key (kind, type, source, day) and 8 of
 * the record's own HMAC. A record is wrongly taken as `unchanged` only if its fingerprint equals a
 * committed row's of another identity: for a row of the same block key (at most n rows: a day of
 * one type from one source, n ≤ 10^5 even for a watch's per-second heart rate) a chance of 2^-64
 * each, for any other row 2^-88 (both parts must collide). Per record at most n·2^-64 + N·2^-88:
 * with n = 10^5 and a ledger of N = 10^10 rows, 5.4·10^-15 + 3·10^-17; over 10^10 records noted,
 * about 5·10^-5 records in all would be skipped wrongly. 20 bytes made that 2^-128 per pair, at
 * 49 bytes a row instead of 21.
 */
export const FINGERPRINT_BYTES = 11;
export const JOB_TAG_BYTES = 16;
/** Bytes of a fingerprint of the earlier versions (a ledger written before issue 38's short form). */
export const EARLIER_FINGERPRINT_BYTES = 20;

/**
 * An earlier version's fingerprint in today's form: its bytes 0-2 and 4-11. Of a clustered one (a
 * 4-byte cluster, then the record's HMAC) that is exactly the fingerprint the caller computes now
 * (the cluster's first 3 bytes, the HMAC's first 8); of an unclustered one (the HMAC's first 20
 * bytes) it is what the caller hands as the record's older form. A ledger converts its rows so,
 * once, and answers as before.
 */
export function shortened(earlier: Buffer): Buffer {
  if (earlier.length !== EARLIER_FINGERPRINT_BYTES) throw new RangeError(`an earlier fingerprint is ${EARLIER_FINGERPRINT_BYTES} bytes, not ${earlier.length}`);
  const fp = Buffer.allocUnsafe(FINGERPRINT_BYTES);
  earlier.copy(fp, 0, 0, 3);
  earlier.copy(fp, 3, 4, 12);
  return fp;
}

/** The port's input rules, shared by the adapters. */
export function checkNote(job: Buffer, fingerprints: readonly Buffer[], unclustered?: readonly Buffer[]): void {
  if (job.length !== JOB_TAG_BYTES) throw new RangeError(`a job tag is ${JOB_TAG_BYTES} bytes, not ${job.length}`);
  if (fingerprints.length > MAX_LEDGER_BATCH) throw new RangeError(`at most ${MAX_LEDGER_BATCH} fingerprints a call, not ${fingerprints.length}`);
  for (const fp of fingerprints) if (fp.length !== FINGERPRINT_BYTES) throw new RangeError(`a fingerprint is ${FINGERPRINT_BYTES} bytes, not ${fp.length}`);
  if (!unclustered) return;
  if (unclustered.length !== fingerprints.length) throw new RangeError(`one older fingerprint per fingerprint: ${unclustered.length} for ${fingerprints.length}`);
  for (const fp of unclustered) if (fp.length !== FINGERPRINT_BYTES) throw new RangeError(`a fingerprint is ${FINGERPRINT_BYTES} bytes, not ${fp.length}`);
}
