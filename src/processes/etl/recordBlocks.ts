import type { NormalizedRecord, ParseItem } from '../../../commands/ingestion/records.js';
import { blockKey, recordIdentity, type JobLedger } from './recordLedger.js';

/**
 * Records of one block at most (a day of per-minute heart rate is twelve blocks; a checkpoint
 * waits for at most this many). A block's records are held until its answer, and on an ETL thread
 * (4 MiB semi-spaces then: a scavenge every ~300 items of an Apple export; a bulk job's thread has
 * ~10.7 MiB since, etlPool.ts BULK_THREAD_YOUNG_GENERATION_MB) records held longer than
 * that outlive two scavenges and are promoted: V8 then allocates every later record straight into
 * the old generation (its allocation-site pretenuring), and a re-import spent more on the
 * collector than on decoding (docs/record-blocks.md, "Blocks and the collector").
 */
export const BLOCK_RECORDS = 128;
/**
 * Fewer records than this are no block: they go record by record, without a block fingerprint. A
 * file whose order interleaves keys (a line of heart rate, a line of steps) would otherwise pay a
 * block fingerprint and ledger row per record, and gain nothing on a re-import.
 */
export const MIN_BLOCK_RECORDS = 8;
/**
 * Records of complete blocks decided together (one note of their fingerprints, one of the records
 * of those that differ) once a block differed: those records wait for their batch's append anyway.
 * Before that, and while blocks are another job's (a re-import), each block is decided as soon as
 * it is complete (`ready`): its records are held no longer than the block (above), and the note of
 * a known block writes nothing.
 */
export const DECIDE_RECORDS = 500;

type Block = { key: string; records: NormalizedRecord[]; identities: string[]; fp?: Buffer };

/**
 * A record decided: `unchanged` when another upload's append stored it (contracts §13); else `fp`
 * is the fingerprint this job claimed for it, to commit once it is in the log (null when the
 * record goes without a claim of its own: never here, where every record not unchanged is noted).
 */
export type Decided = { record: NormalizedRecord; unchanged: boolean; fp: Buffer | null };

/**
 * Re-imports compare blocks first (issue 38). A block is a run of records the decoder yields one
 * after the other with one `blockKey`, cut after BLOCK_RECORDS, so its bounds are where the file's
 * order puts them: in a Health app export (records grouped by type, then source, then time) one
 * type and source on one day, whose bounds a newer export adding days does not move. Its
 * fingerprint (JobLedger.blockFingerprint) is one more opaque fingerprint in the ledger, noted
 * and committed by the same rules as a record's:
 *
 * - A block another job committed is wholly `unchanged`: no fingerprint or lookup per record.
 *   That job committed it only once every record of it was in the log (written by it, or
 *   unchanged because another job had), so each of them would answer `unchanged` on its own too,
 *   unless this job claimed one of them itself: that is what `tainted` rules out (below).
 * - Every other block goes record by record exactly as without blocks, and its fingerprint,
 *   claimed by the same note, is committed (`settled`) once all its records are in the log.
 *
 * A job claims a record's fingerprint only while going record by record, and a record's key is a
 * function of its identity, so a block can hold a record this job claimed only if a block of the
 * same key went record by record before it: such keys are `tainted` and their blocks always go
 * record by record. A resumed run also taints the key of every item it passes over (an earlier
 * run may have gone record by record there); after the resume point it meets the same items and
 * the ledger gives it the same answers (its own claims answer false, a commit is never undone), so
 * it decides as the first run did.
 */
export class RecordBlocks {
  private open: Block | null = null;
  private complete: Block[] = [];
  private completeRecords = 0;
  private readonly tainted = new Set<string>();
  private lastPassed: string | null = null;
  /** Fingerprints of blocks this job claimed, to commit once their records are in the log. */
  private unsettled: Buffer[] = [];
  /** Each block decided as soon as it is complete: until one differs or a decision holds no block, and again once one is another job's (DECIDE_RECORDS). */
  private eager = true;

  constructor(private readonly ledger: JobLedger) {}

  /** An item a resumed run passes over (its checkpoint holds it). */
  passed(item: ParseItem): void {
    if (!('record' in item)) return;
    const key = blockKey(item.record);
    if (key !== this.lastPassed) this.tainted.add(key);
    this.lastPassed = key;
  }

  /** Whether `record` would begin a new block, the open one being complete: where a checkpoint cuts no block. */
  begins(record: NormalizedRecord): boolean {
    return this.open === null || this.open.records.length >= BLOCK_RECORDS || this.open.key !== blockKey(record);
  }

  add(record: NormalizedRecord): void {
    if (this.begins(record)) {
      this.close();
      this.open = { key: blockKey(record), records: [], identities: [] };
    }
    this.open!.records.push(record);
    this.open!.identities.push(recordIdentity(record));
  }

  /** Enough complete blocks wait to be decided together. */
  get ready(): boolean {
    return this.completeRecords >= (this.eager ? 1 : DECIDE_RECORDS);
  }

  /** Decides the complete blocks (and the open one too when `all`): their records in order, each with its answer. */
  async decide(all: boolean): Promise<Decided[]> {
    if (all) this.close();
    const blocks = this.complete;
    this.complete = [];
    this.completeRecords = 0;
    if (blocks.length === 0) return [];
    const whole = blocks.filter((b) => b.records.length >= MIN_BLOCK_RECORDS);
    for (const b of whole) b.fp = this.ledger.blockFingerprint(b.key, b.identities);
    if (!this.eager) return this.recordByRecord(blocks, whole);
    const answers = await this.ledger.knownBlocks(whole.map((b) => b.fp!));
    const known = new Map(whole.map((b, i) => [b, answers[i]!]));
    // Eager only while the last block decided was another job's: runs too short to be blocks (a file
    // interleaving keys line by line) would otherwise be decided, and noted in the ledger, one record at a time.
    this.eager = whole.length > 0 && answers[answers.length - 1] === true;
    const out: Decided[] = [];
    const records: NormalizedRecord[] = [];
    const identities: string[] = [];
    const at: number[] = [];
    for (const b of blocks) {
      if (known.get(b) === true && !this.tainted.has(b.key)) {
        for (const record of b.records) out.push({ record, unchanged: true, fp: null });
        continue;
      }
      this.tainted.add(b.key);
      // Claimed by the note unless another job had committed it (then nothing is claimed and nothing to commit).
      if (known.get(b) === false) this.unsettled.push(b.fp!);
      for (let j = 0; j < b.records.length; j++) {
        at.push(out.length);
        out.push({ record: b.records[j]!, unchanged: false, fp: null });
        records.push(b.records[j]!);
        identities.push(b.identities[j]!);
      }
    }
    if (records.length > 0) {
      const { known, claimed } = await this.ledger.known(records, identities);
      known.forEach((a, k) => {
        const d = out[at[k]!]!;
        d.unchanged = a;
        d.fp = claimed[k]!;
      });
    }
    return out;
  }

  /**
   * Once a block differed (not `eager`: a first import, the new days of a newer export), every
   * block is decided record by record, its records noted in the same turn as the blocks'
   * fingerprints, so that both notes share one write (one fsync on SQLite) instead of the records'
   * note waiting for the blocks' answers. The answers are the record-by-record rule's by
   * construction; what the blocks' note adds is only their claims, committed once their records
   * are in the log as for any block that went record by record, and whether the last block was
   * another job's (then decisions are eager again). A block that was another job's and whose
   * records were noted anyway taints its key like any block that went record by record: this job
   * may have claimed one of its records.
   */
  private async recordByRecord(blocks: Block[], whole: Block[]): Promise<Decided[]> {
    const records: NormalizedRecord[] = [];
    const identities: string[] = [];
    for (const b of blocks) {
      this.tainted.add(b.key);
      for (let j = 0; j < b.records.length; j++) {
        records.push(b.records[j]!);
        identities.push(b.identities[j]!);
      }
    }
    const [answers, { known, claimed }] = await Promise.all([this.ledger.knownBlocks(whole.map((b) => b.fp!)), this.ledger.known(records, identities)]);
    whole.forEach((b, i) => {
      // Claimed by the note unless another job had committed it (then nothing is claimed and nothing to commit).
      if (!answers[i]) this.unsettled.push(b.fp!);
    });
    this.eager = whole.length > 0 && answers[answers.length - 1] === true;
    return records.map((record, k) => ({ record, unchanged: known[k]!, fp: claimed[k]! }));
  }

  /**
   * The fingerprints of the blocks decided so far that this job claimed, taken: the caller commits
   * them once every record they hold is in the log (after the append of every open batch).
   */
  settled(): Buffer[] {
    const fps = this.unsettled;
    this.unsettled = [];
    return fps;
  }

  private close(): void {
    if (!this.open) return;
    this.complete.push(this.open);
    this.completeRecords += this.open.records.length;
    this.open = null;
  }
}
