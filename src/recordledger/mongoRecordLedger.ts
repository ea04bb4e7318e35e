import type { Collection, Db } from 'mongodb';
import { acquireMongoClient, type MongoHandle } from '../readstore/mongoConnection.js';
import { checkNote, type RecordLedger } from './recordLedger.js';

/**
 * A ledger row as stored: the fingerprint is the `_id` (base64), so the collection's own unique
 * index on `_id` is the one that makes a second job's insert of a fingerprint fail; no other index
 * is needed, since every read is by `_id`. `job` is the noting job's tag (base64).
 */
export type LedgerDoc = { _id: string; job: string };

export const RECORD_LEDGER = '_record_ledger';
const DUPLICATE_KEY = 11000;

/**
 * The ledger on MongoDB, in the read store's database. A batch is one `find` by `_id` and, for the
 * fingerprints not found, one unordered `insertMany`; no transaction is assumed. Two jobs noting
 * the same fingerprint at once race on the `_id` index: the loser's insert fails with a duplicate
 * key and its rows are read again, so each fingerprint has exactly one first job, as on SQLite.
 */
export class MongoRecordLedger implements RecordLedger {
  readonly backend = 'mongodb' as const;
  private readonly rows: Collection<LedgerDoc>;

  constructor(
    db: Db,
    private readonly handle?: MongoHandle,
  ) {
    this.rows = db.collection<LedgerDoc>(RECORD_LEDGER);
  }

  static async connect(options: { url: string; database: string }): Promise<MongoRecordLedger> {
    // One client per process, shared with the read and raw stores (src/readstore/mongoConnection.ts).
    const handle = await acquireMongoClient(options.url);
    return new MongoRecordLedger(handle.client.db(options.database), handle);
  }

  async note(job: Buffer, fingerprints: readonly Buffer[]): Promise<boolean[]> {
    checkNote(job, fingerprints);
    if (fingerprints.length === 0) return [];
    const tag = job.toString('base64');
    const ids = fingerprints.map((fp) => fp.toString('base64'));
    const owners = await this.owners(ids);
    const missing = [...new Set(ids.filter((id) => !owners.has(id)))];
    if (missing.length > 0) {
      try {
        await this.rows.insertMany(
          missing.map((_id) => ({ _id, job: tag })),
          { ordered: false },
        );
        for (const id of missing) owners.set(id, tag);
      } catch (err) {
        if (!onlyDuplicates(err)) throw err;
        // Another job noted some of them meanwhile: whoever holds each row now noted it first.
        for (const [id, owner] of await this.owners(missing)) owners.set(id, owner);
      }
    }
    return ids.map((id) => owners.get(id) !== tag);
  }

  private async owners(ids: readonly string[]): Promise<Map<string, string>> {
    const found = await this.rows.find({ _id: { $in: [...ids] } }, { projection: { job: 1 } }).toArray();
    return new Map(found.map((d) => [d._id, d.job]));
  }

  async close(): Promise<void> {
    await this.handle?.release();
  }
}

/** A bulk insert refused only for keys already present (unordered: every other row was written). */
function onlyDuplicates(err: unknown): boolean {
  const e = err as { code?: unknown; writeErrors?: { code?: unknown } | { code?: unknown }[] } | null;
  if (!e) return false;
  const writeErrors = e.writeErrors === undefined ? [] : Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
  if (writeErrors.length > 0) return writeErrors.every((w) => w.code === DUPLICATE_KEY);
  return e.code === DUPLICATE_KEY;
}
