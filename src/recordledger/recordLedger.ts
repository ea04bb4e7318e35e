/**
 * The record ledger (contracts §13 `unchanged`): which records an earlier upload of the same
 * provider and user stored already, so that a newer export holding an older one writes only what
 * is new. The port knows nothing of records or users: callers hand it opaque fingerprints (an HMAC
 * of a record's identity under a key derived from the data key of the user's provider data) and an
 * opaque tag of the job noting them (an HMAC of the job under the same key). A ledger row therefore
 * names no user, job or value: once the data key is destroyed (user deletion, provider erasure),
 * nothing can read or match the rows it left (docs/erasure.md, "The record ledger").
 *
 * Batch-shaped: one call notes many fingerprints, so an adapter answers a batch in one round trip
 * (MongoDB) or one transaction (SQLite).
 */
export interface RecordLedger {
  readonly backend: 'sqlite' | 'mongodb';
  /**
   * Notes each fingerprint as `job`'s unless a row holds it already, and answers, in order, true
   * for the fingerprints another job noted first. A job's own rows answer false, so a run resumed
   * after a crash decides as the first one did; the same fingerprint twice in one call answers
   * false twice. At most MAX_LEDGER_BATCH fingerprints a call.
   */
  note(job: Buffer, fingerprints: readonly Buffer[]): Promise<boolean[]>;
  close(): Promise<void>;
}

/** Fingerprints per call at most: the caller cannot make one call hold a whole upload. */
export const MAX_LEDGER_BATCH = 10_000;
/** Bytes of a fingerprint and of a job tag (truncated HMAC-SHA-256). */
export const FINGERPRINT_BYTES = 20;
export const JOB_TAG_BYTES = 16;

/** The port's input rules, shared by the adapters. */
export function checkNote(job: Buffer, fingerprints: readonly Buffer[]): void {
  if (job.length !== JOB_TAG_BYTES) throw new RangeError(`a job tag is ${JOB_TAG_BYTES} bytes, not ${job.length}`);
  if (fingerprints.length > MAX_LEDGER_BATCH) throw new RangeError(`at most ${MAX_LEDGER_BATCH} fingerprints a call, not ${fingerprints.length}`);
  for (const fp of fingerprints) if (fp.length !== FINGERPRINT_BYTES) throw new RangeError(`a fingerprint is ${FINGERPRINT_BYTES} bytes, not ${fp.length}`);
}
