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
 *
 * A row holds the job as a number (`ledger_jobs` names it once): rows of 20-byte fingerprints
 * with the ~100-character job stream each filled five times the pages, and every transaction of
 * random fingerprints rewrites the pages it touches: the ledger took a fifth of the ETL thread's
 * time in the first import of an export, nearly as much as decoding it (BENCHMARKS.md, issue 21). A ledger of the earlier layout
 * (`fingerprints`, the job's name in each row) is moved into this one when it is opened.
 */
export class SqliteRecordLedger implements RecordLedger {
  private readonly db: Database.Database;
  private readonly find: Database.Statement<[Buffer], { job: number }>;
  private readonly insert: Database.Statement<[Buffer, number]>;
  private readonly jobId: Database.Statement<[string], { id: number }>;
  private readonly addJob: Database.Statement<[string]>;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    eraseOnDelete(this.db);
    // Opening may wait for another thread opening it at the same moment (the layout's move is one
    // transaction); nothing is served while a thread opens its stores.
    this.db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
    this.db.transaction(() => {
      this.db.exec(`CREATE TABLE IF NOT EXISTS ledger_jobs (id INTEGER PRIMARY KEY, job TEXT NOT NULL UNIQUE);
        CREATE TABLE IF NOT EXISTS record_fingerprints (fp BLOB PRIMARY KEY, job INTEGER NOT NULL) WITHOUT ROWID`);
      const earlier = this.db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'fingerprints'").get();
      if (earlier) {
        this.db.exec(`INSERT OR IGNORE INTO ledger_jobs (job) SELECT DISTINCT job FROM fingerprints;
          INSERT OR IGNORE INTO record_fingerprints (fp, job) SELECT f.fp, j.id FROM fingerprints f JOIN ledger_jobs j ON j.job = f.job;
          DROP TABLE fingerprints`);
      }
    }).immediate();
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.find = this.db.prepare('SELECT job FROM record_fingerprints WHERE fp = ?');
    this.insert = this.db.prepare('INSERT OR IGNORE INTO record_fingerprints (fp, job) VALUES (?, ?)');
    this.jobId = this.db.prepare('SELECT id FROM ledger_jobs WHERE job = ?');
    this.addJob = this.db.prepare('INSERT OR IGNORE INTO ledger_jobs (job) VALUES (?)');
  }

  async known(upload: UploadAccepted['data'], job: string, records: readonly NormalizedRecord[], fingerprintKey: Buffer): Promise<boolean[]> {
    // The user and provider are in the HMAC's input: one table serves every user without naming them.
    const fps = records.map((r) => createHmac('sha256', fingerprintKey).update(`${upload.user_id}\u0000${upload.provider}\u0000${recordIdentity(r)}`).digest().subarray(0, 20));
    return withWriteLock(() =>
      this.db.transaction(() => {
        let own = this.jobId.get(job)?.id;
        return fps.map((fp) => {
          const row = this.find.get(fp);
          if (row) return row.job !== own;
          if (own === undefined) {
            this.addJob.run(job);
            own = this.jobId.get(job)!.id;
          }
          this.insert.run(fp, own);
          return false;
        });
      })(),
    );
  }

  close(): void {
    this.db.close();
  }
}

/** How long opening the ledger waits for another connection's write (see the constructor). */
const OPEN_BUSY_TIMEOUT_MS = 30_000;
