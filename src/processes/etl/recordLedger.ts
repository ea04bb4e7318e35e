import { createHmac } from 'node:crypto';
import type { NormalizedRecord } from '../../../commands/ingestion/records.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import { EARLIER_FINGERPRINT_BYTES, FINGERPRINT_BYTES, JOB_TAG_BYTES, MAX_LEDGER_BATCH, shortened, type RecordLedger } from '../../recordledger/recordLedger.js';
import { recordDay } from './recordDay.js';

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

/**
 * What puts records in one block (recordBlocks.ts) and their fingerprints in one cluster of the
 * ledger (`ledgerOf`): kind, type, source and the UTC day they count for. Each is part of the
 * record's identity, so two records of one identity always have one key.
 */
export function blockKey(r: NormalizedRecord): string {
  const type = r.kind === 'observation' ? r.code : 'type' in r ? r.type : '';
  return `${r.kind}\u0000${type}\u0000${r.source}\u0000${recordDay(r) ?? ''}`;
}

/**
 * Bytes a fingerprint begins with, the same for every record of one block key (`ledgerOf`); the
 * rest is the record's (or block's) own HMAC, truncated to 8 bytes (FINGERPRINT_BYTES, where the
 * collision bound is written down: two identities of one key share a fingerprint only if those 64
 * bits collide). 3 bytes (4 before issue 38's short form): the cluster only orders the index and
 * keeps rows of other keys apart; its first 3 bytes are those of the earlier 4 (`shortened`).
 */
export const CLUSTER_BYTES = 3;
/** Clusters a job remembers (a key a day per type and source): forgotten all at once past this many. */
const CLUSTERS_CACHED = 4096;

/** One job's view of the ledger (`ledgerOf`). */
export type JobLedger = ReturnType<typeof ledgerOf>;

/**
 * One job's view of the ledger. Fingerprints and the job's tag are HMACs under a key derived from
 * the data key of the user's provider data (docs/erasure.md): the ledger's rows name no user, job
 * or value, and once the key is destroyed (the user deleted, the provider's data erased) nothing
 * can match or read them; a later generation has another key, so its uploads match none of them.
 * The user and provider are in each fingerprint's input too: one ledger serves every user.
 *
 * A fingerprint begins with CLUSTER_BYTES of an HMAC of the record's `blockKey` (issue 38): the
 * records of one type, source and day sit together in the ledger's index, so a batch of them reads
 * and writes a few of its pages, not one page per record wherever its HMAC falls (the ledger's
 * lookups and commits were two thirds of an ETL thread's CPU, and grew with the ledger). The
 * rows so cluster by (user, provider, kind, type, source, day) among themselves, as they did by
 * job; they still name nothing, and match nothing once the key is gone. A ledger holding rows of
 * the older form (the HMAC's first 20 bytes, `shortened` as the ledger converted them:
 * `unclusteredRows`) is asked with both forms.
 *
 * A block of records (recordBlocks.ts) has a fingerprint of the same kind under the same key: the
 * scope, then `block`, then its records' identities one a line. A record's input continues after
 * the scope with its identity, a JSON array or object, so no block's input is ever a record's.
 */
export function ledgerOf(ledger: RecordLedger, dataKey: Buffer, upload: UploadAccepted['data'], job: string) {
  const key = createHmac('sha256', dataKey).update('record-ledger').digest();
  const tag = createHmac('sha256', key).update(`job\u0000${job}`).digest().subarray(0, JOB_TAG_BYTES);
  const scope = `${upload.user_id}\u0000${upload.provider}\u0000`;
  const clusters = new Map<string, Buffer>();
  const clusterOf = (blockKey: string): Buffer => {
    let c = clusters.get(blockKey);
    if (!c) {
      if (clusters.size >= CLUSTERS_CACHED) clusters.clear();
      clusters.set(blockKey, (c = createHmac('sha256', key).update(`${scope}cluster\u0000${blockKey}`).digest().subarray(0, CLUSTER_BYTES)));
    }
    return c;
  };
  /** The clustered fingerprint of an HMAC `digest` of the records of `blockKey`. */
  const clustered = (blockKey: string, digest: Buffer): Buffer => {
    const fp = Buffer.allocUnsafe(FINGERPRINT_BYTES);
    clusterOf(blockKey).copy(fp, 0);
    digest.copy(fp, CLUSTER_BYTES, 0, FINGERPRINT_BYTES - CLUSTER_BYTES);
    return fp;
  };
  /** A record's fingerprint (and, where the ledger holds rows of the older form, that form too: the same HMAC's first 20 bytes). */
  const fingerprintOf = (r: NormalizedRecord, identity: string): { fp: Buffer; older: Buffer } => {
    const digest = createHmac('sha256', key).update(scope + identity).digest();
    return { fp: clustered(blockKey(r), digest), older: shortened(digest.subarray(0, EARLIER_FINGERPRINT_BYTES)) };
  };
  const inBatches = async <T>(fps: readonly Buffer[], call: (from: number, to: number) => Promise<T[] | void>): Promise<T[]> => {
    const out: T[] = [];
    for (let i = 0; i < fps.length; i += MAX_LEDGER_BATCH) out.push(...((await call(i, Math.min(i + MAX_LEDGER_BATCH, fps.length))) ?? []));
    return out;
  };
  /**
   * Claims of this job whose records are in the log, not committed yet (`appended`): committed
   * with the ledger's next write. Each batch's fingerprints copied into one buffer, split again
   * only to commit: the thousand small buffers of a batch are not held past its append.
   */
  let appendedRuns: Buffer[] = [];
  const takeAppended = (): Buffer[] => {
    const fps: Buffer[] = [];
    for (const run of appendedRuns) for (let at = 0; at < run.length; at += FINGERPRINT_BYTES) fps.push(run.subarray(at, at + FINGERPRINT_BYTES));
    appendedRuns = [];
    return fps;
  };
  const commit = (fps: readonly Buffer[]): Promise<void[]> => inBatches(fps, (from, to) => ledger.commit(tag, fps.slice(from, to)));
  const note = async (fps: readonly Buffer[], unclustered?: readonly Buffer[]): Promise<boolean[]> => {
    const committing = takeAppended();
    // Asked for in the same turn as the note, so in its transaction on SQLite (one fsync for both: SqliteGroupCommit).
    // A note answers each fingerprint alike before or after this job's commits (its own claim answers false either way).
    const [, answers] = await Promise.all([commit(committing), inBatches(fps, (from, to) => ledger.note(tag, fps.slice(from, to), unclustered?.slice(from, to)))]);
    return answers;
  };
  return {
    /**
     * One answer per record, in order: true when another upload's append stored it; the rest are
     * claimed as this job's, and `claimed` holds their fingerprints (null where the answer is
     * true), for `stored` to commit once their records are in the log: the caller keeps those,
     * not the records (recordBatcher.ts). `identities`, when given, are the records' `recordIdentity`s.
     */
    known: async (records: readonly NormalizedRecord[], identities?: readonly string[]): Promise<{ known: boolean[]; claimed: (Buffer | null)[] }> => {
      const both = records.map((r, i) => fingerprintOf(r, identities?.[i] ?? recordIdentity(r)));
      const fps = both.map((f) => f.fp);
      const answers = await note(fps, ledger.unclusteredRows ? both.map((f) => f.older) : undefined);
      return { known: answers, claimed: fps.map((fp, i) => (answers[i] ? null : fp)) };
    },
    /**
     * The records of these fingerprints (claimed by this job: `known`'s `claimed`) are durably in
     * the log: committed with the ledger's next write, a note or `stored`, rather than in a
     * write of their own (issue 38: a first import's commit after each appended batch was a third
     * of its ledger's transactions, each an fsync on the ETL thread). Until then other uploads do
     * not count them `unchanged`, as before their append; a run that stops meanwhile leaves them
     * claimed, and its resumed run, sending the same batches again, commits them.
     */
    appended: (fps: readonly Buffer[]): void => {
      if (fps.length > 0) appendedRuns.push(Buffer.concat(fps as Buffer[]));
    },
    /**
     * The records of `appended` fingerprints, and every record of these blocks
     * (`blockFingerprint`), are durably in the log: committed now, so that from now on other
     * uploads count them `unchanged`.
     */
    stored: async (fps: readonly Buffer[]): Promise<void> => {
      const committing = takeAppended();
      for (const fp of fps) committing.push(fp);
      await commit(committing);
    },
    /**
     * The fingerprint of a block whose `blockKey` is `ofKey`: its records' identities, in order. Blocks have no
     * older form to ask for: a block not found goes record by record, which asks for both.
     */
    blockFingerprint: (ofKey: string, identities: readonly string[]): Buffer => {
      const h = createHmac('sha256', key).update(`${scope}block`);
      for (const id of identities) h.update(`\n${id}`);
      return clustered(ofKey, h.digest());
    },
    /** As `known`, for blocks' fingerprints: true when another upload committed the block (every record of it was in the log). */
    knownBlocks: (fps: readonly Buffer[]): Promise<boolean[]> => note(fps),
  };
}
