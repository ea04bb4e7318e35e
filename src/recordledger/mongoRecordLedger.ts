import type { Collection, Db } from 'mongodb';
import { acquireMongoClient, type MongoHandle } from '../readstore/mongoConnection.js';
import { checkNote, EARLIER_FINGERPRINT_BYTES, shortened, type RecordLedger } from './recordLedger.js';

/**
 * A ledger row as stored: one per fingerprint and job that claimed it, `_id` both of them
 * (base64, `<fp>.<job>`), `committed` once the job's records are in the log. Rows of the first
 * version (`_id` the fingerprint alone, no `fp`) were one per fingerprint, its first job's, and
 * count as committed, as they did. Rows of the versions before issue 38's short fingerprints (20
 * bytes) are converted when a connection first finds them (`upgradeRows`).
 */
export type LedgerDoc = { _id: string; fp?: string; job: string; committed?: boolean };

export const RECORD_LEDGER = '_record_ledger';
/**
 * The document that says whether the collection held rows before fingerprints were clustered
 * (the port's `unclusteredRows`), written by the first connection of this version. No row's `_id`
 * is it: a row's is base64, which has no `!`.
 */
export const FINGERPRINT_FORM_ID = '!fingerprint-form';
/** `short`: the collection's rows were converted to short fingerprints (`upgradeRows`). */
type FormDoc = { _id: string; unclustered: boolean; short?: boolean };
/** Rows converted a round trip. */
const CONVERT_BATCH = 1000;
const DUPLICATE_KEY = 11000;

const claimId = (fp: string, tag: string) => `${fp}.${tag}`;

/**
 * The ledger on MongoDB, in the read store's database. A note is one `find` of the fingerprints'
 * rows (by `fp`, and by `_id` for rows of the first version) and, for the fingerprints neither
 * this job claimed nor another committed, one unordered `insertMany` of this job's claims; a
 * commit is one `updateMany` by `_id`. No transaction is assumed: each row is one job's, so two
 * jobs never race on a row, and a claim this job already made is a duplicate key, ignored.
 */
export class MongoRecordLedger implements RecordLedger {
  readonly backend = 'mongodb' as const;
  private readonly rows: Collection<LedgerDoc>;

  /** `unclusteredRows` as `connect` reads it from the collection (tests give it). */
  constructor(
    db: Db,
    private readonly handle?: MongoHandle,
    readonly unclusteredRows = false,
  ) {
    this.rows = db.collection<LedgerDoc>(RECORD_LEDGER);
  }

  static async connect(options: { url: string; database: string }): Promise<MongoRecordLedger> {
    // One client per process, shared with the read and raw stores (src/readstore/mongoConnection.ts).
    const handle = await acquireMongoClient(options.url);
    const db = handle.client.db(options.database);
    const ledger = new MongoRecordLedger(db, handle, await upgradeRows(db.collection<LedgerDoc>(RECORD_LEDGER)));
    await ledger.ensureIndexes();
    return ledger;
  }

  async ensureIndexes(): Promise<void> {
    await this.rows.createIndex({ fp: 1 }, { name: 'fp' });
  }

  async note(job: Buffer, fingerprints: readonly Buffer[], unclustered?: readonly Buffer[]): Promise<boolean[]> {
    checkNote(job, fingerprints, unclustered);
    if (fingerprints.length === 0) return [];
    const tag = job.toString('base64');
    const ids = fingerprints.map((fp) => fp.toString('base64'));
    const older = this.unclusteredRows && unclustered ? unclustered.map((fp) => fp.toString('base64')) : null;
    const unique = [...new Set(ids)];
    const asked = older ? [...new Set([...unique, ...older])] : unique;
    const found = await this.rows.find({ $or: [{ fp: { $in: asked } }, { _id: { $in: asked } }] }, { projection: { fp: 1, job: 1, committed: 1 } }).toArray();
    const mine = new Set<string>();
    const committed = new Set<string>();
    for (const d of found) {
      const fp = d.fp ?? d._id;
      if (d.job === tag) mine.add(fp);
      else if (d.fp === undefined || d.committed === true) committed.add(fp);
    }
    // A fingerprint is judged by the rows of both its forms (the port's `note`); only its current form is claimed.
    const known = new Map(unique.map((fp) => [fp, !mine.has(fp) && committed.has(fp)]));
    if (older)
      ids.forEach((fp, i) => {
        const old = older[i]!;
        if (!mine.has(fp) && !committed.has(fp) && !mine.has(old) && committed.has(old)) known.set(fp, true);
      });
    const claim = unique.filter((fp) => !mine.has(fp) && !known.get(fp));
    if (claim.length > 0) {
      try {
        await this.rows.insertMany(claim.map((fp) => ({ _id: claimId(fp, tag), fp, job: tag, committed: false })), { ordered: false });
      } catch (err) {
        // This job's own claim made meanwhile (a resumed run beside the one it resumes): the same row.
        if (!onlyDuplicates(err)) throw err;
      }
    }
    return ids.map((fp) => known.get(fp)!);
  }

  async commit(job: Buffer, fingerprints: readonly Buffer[]): Promise<void> {
    checkNote(job, fingerprints);
    if (fingerprints.length === 0) return;
    const tag = job.toString('base64');
    await this.rows.updateMany({ _id: { $in: fingerprints.map((fp) => claimId(fp.toString('base64'), tag)) } }, { $set: { committed: true } });
  }

  async close(): Promise<void> {
    await this.handle?.release();
  }
}

/**
 * Whether the collection holds rows of unclustered fingerprints, as the first connection of this
 * version found it (it holds rows then: all of them are of the older form), remembered in a
 * document of its own so that later rows do not count.
 */
export async function unclusteredRowsOf(rows: Collection<LedgerDoc>): Promise<boolean> {
  const forms = rows as unknown as Collection<FormDoc>;
  const known = await forms.findOne({ _id: FINGERPRINT_FORM_ID });
  if (known) return known.unclustered;
  const unclustered = (await rows.findOne({}, { projection: { _id: 1 } })) !== null;
  try {
    await forms.insertOne({ _id: FINGERPRINT_FORM_ID, unclustered });
  } catch (err) {
    // Another connection wrote it first: its answer holds.
    if (!onlyDuplicates(err)) throw err;
    return (await forms.findOne({ _id: FINGERPRINT_FORM_ID }))!.unclustered;
  }
  return unclustered;
}

/**
 * Readies a collection for this version, once: the form document (`unclusteredRowsOf`), and every
 * row of an earlier version's 20-byte fingerprints in their `shortened` form (its job and flag
 * kept; a row of the first version, committed), so that they answer as before. The first
 * connection of this version converts; one that starts meanwhile does the same work again
 * (each step is idempotent: a converted row is a duplicate key, an old row gone is not deleted
 * twice). Answers `unclusteredRows`.
 */
export async function upgradeRows(rows: Collection<LedgerDoc>): Promise<boolean> {
  const unclustered = await unclusteredRowsOf(rows);
  const forms = rows as unknown as Collection<FormDoc>;
  if ((await forms.findOne({ _id: FINGERPRINT_FORM_ID }))?.short) return unclustered;
  let after = '';
  for (;;) {
    const page = await rows.find({ _id: { $gt: after } }).sort({ _id: 1 }).limit(CONVERT_BATCH).toArray();
    if (page.length === 0) break;
    after = page[page.length - 1]!._id;
    const earlier = page.filter((d) => d._id !== FINGERPRINT_FORM_ID && Buffer.from(d.fp ?? d._id, 'base64').length === EARLIER_FINGERPRINT_BYTES);
    if (earlier.length === 0) continue;
    const converted = earlier.map((d) => {
      const fp = shortened(Buffer.from(d.fp ?? d._id, 'base64')).toString('base64');
      return { _id: claimId(fp, d.job), fp, job: d.job, committed: d.fp === undefined || d.committed === true };
    });
    try {
      await rows.insertMany(converted, { ordered: false });
    } catch (err) {
      // Two earlier rows of one job that shortened alike, or another connection converting too.
      if (!onlyDuplicates(err)) throw err;
    }
    // Where such a duplicate was there first, a commit among them still counts.
    const committed = converted.filter((d) => d.committed).map((d) => d._id);
    if (committed.length > 0) await rows.updateMany({ _id: { $in: committed } }, { $set: { committed: true } });
    await rows.deleteMany({ _id: { $in: earlier.map((d) => d._id) } });
  }
  await forms.updateOne({ _id: FINGERPRINT_FORM_ID }, { $set: { short: true } });
  return unclustered;
}

/** A bulk insert refused only for keys already present (unordered: every other row was written). */
function onlyDuplicates(err: unknown): boolean {
  const e = err as { code?: unknown; writeErrors?: { code?: unknown } | { code?: unknown }[] } | null;
  if (!e) return false;
  const writeErrors = e.writeErrors === undefined ? [] : Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
  if (writeErrors.length > 0) return writeErrors.every((w) => w.code === DUPLICATE_KEY);
  return e.code === DUPLICATE_KEY;
}
