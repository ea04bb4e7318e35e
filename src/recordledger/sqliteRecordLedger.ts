import Database from 'better-sqlite3';
import { eraseOnDelete } from '../shared/sqlitePurge.js';
import { BUSY_TIMEOUT_MS, withWriteLock } from '../shared/sqliteWriteLock.js';
import { checkNote, JOB_TAG_BYTES, type RecordLedger } from './recordLedger.js';

/**
 * The embedded ledger: `DATA_DIR/record-ledger.sqlite`, a file of its own (a batch never waits on
 * the read models' write lock), one row per fingerprint with the tag of the job that first noted it.
 * The primary key on the fingerprint is what makes a second job's note find the first one's row.
 */
export class SqliteRecordLedger implements RecordLedger {
  readonly backend = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly find: Database.Statement<[Buffer], Buffer>;
  private readonly insert: Database.Statement<[Buffer, Buffer]>;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    eraseOnDelete(this.db);
    this.db.exec('CREATE TABLE IF NOT EXISTS fingerprints (fp BLOB PRIMARY KEY, job BLOB NOT NULL) WITHOUT ROWID');
    // Rows of the first version (user_version 0) named their job in the clear (its upload stream,
    // hence its user): once, they are given a tag that names nobody and keep counting as another job's.
    if (this.db.pragma('user_version', { simple: true }) === 0) {
      this.db.transaction(() => {
        this.db.prepare("UPDATE fingerprints SET job = ? WHERE typeof(job) = 'text'").run(Buffer.alloc(JOB_TAG_BYTES));
        this.db.pragma('user_version = 1');
      })();
    }
    this.find = this.db.prepare<[Buffer], Buffer>('SELECT job FROM fingerprints WHERE fp = ?').pluck();
    this.insert = this.db.prepare('INSERT INTO fingerprints (fp, job) VALUES (?, ?)');
  }

  async note(job: Buffer, fingerprints: readonly Buffer[]): Promise<boolean[]> {
    checkNote(job, fingerprints);
    if (fingerprints.length === 0) return [];
    return withWriteLock(() =>
      this.db.transaction(() =>
        fingerprints.map((fp) => {
          const owner = this.find.get(fp);
          if (owner) return !job.equals(owner);
          this.insert.run(fp, job);
          return false;
        }),
      )(),
    );
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
