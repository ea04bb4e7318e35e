import { createHmac } from 'node:crypto';
import Database from 'better-sqlite3';
import type { NormalizedRecord } from '../../../commands/ingestion/records.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import { BUSY_TIMEOUT_MS, withWriteLock } from '../../shared/sqliteWriteLock.js';
import { eraseOnDelete } from '../../shared/sqlitePurge.js';

/**
 * Which records of an upload an earlier upload of the same provider and user stored already
 * (contracts §13 `unchanged`: same type, start, end, value, unit and source), so a newer export
 * that holds an older one writes only what is new.
 */
export interface RecordLedger {
  /** One answer per record, in order: true when another upload stored it; the rest are noted as this job's. */
  known(upload: UploadAccepted['data'], job: string, records: readonly NormalizedRecord[], fingerprintKey: Buffer): Promise<boolean[]>;
  close(): void;
}

/**
 * What makes two records the same stored record. For samples the contract's fields; for the
 * other kinds everything they hold but the id the source gave them and their metadata.
 */
export function recordIdentity(r: NormalizedRecord): string {
  if (r.kind === 'quantity') return JSON.stringify(['quantity', r.type, r.start_date, r.end_date, r.value, r.unit, r.source]);
  if (r.kind === 'category') return JSON.stringify(['category', r.type, r.start_date, r.end_date, r.value, r.source]);
  const { external_id: _id, metadata: _m, ...rest } = r as NormalizedRecord & { metadata?: unknown };
  return JSON.stringify(rest);
}

/**
 * The embedded ledger: `DATA_DIR/record-ledger.sqlite`, one row per record fingerprint and the job
 * that first noted it. A fingerprint is an HMAC under the data key of the provider's data of the
 * user (docs/erasure.md): once that data is erased its key is destroyed, so the rows left behind
 * name nothing and match no later upload (a later generation has another key). A job's own rows
 * do not count against it: a run resumed after a crash decides as the first one did.
 */
export class SqliteRecordLedger implements RecordLedger {
  private readonly db: Database.Database;
  private readonly find: Database.Statement<[Buffer], { job: string }>;
  private readonly insert: Database.Statement<[Buffer, string]>;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    eraseOnDelete(this.db);
    this.db.exec('CREATE TABLE IF NOT EXISTS fingerprints (fp BLOB PRIMARY KEY, job TEXT NOT NULL) WITHOUT ROWID');
    this.find = this.db.prepare('SELECT job FROM fingerprints WHERE fp = ?');
    this.insert = this.db.prepare('INSERT OR IGNORE INTO fingerprints (fp, job) VALUES (?, ?)');
  }

  async known(upload: UploadAccepted['data'], job: string, records: readonly NormalizedRecord[], fingerprintKey: Buffer): Promise<boolean[]> {
    // The user and provider are in the HMAC's input: one table serves every user without naming them.
    const fps = records.map((r) => createHmac('sha256', fingerprintKey).update(`${upload.user_id}\u0000${upload.provider}\u0000${recordIdentity(r)}`).digest().subarray(0, 20));
    return withWriteLock(() =>
      this.db.transaction(() =>
        fps.map((fp) => {
          const row = this.find.get(fp);
          if (row) return row.job !== job;
          this.insert.run(fp, job);
          return false;
        }),
      )(),
    );
  }

  close(): void {
    this.db.close();
  }
}
