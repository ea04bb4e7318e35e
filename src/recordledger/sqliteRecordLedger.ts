import Database from 'better-sqlite3';
import { eraseOnDelete } from '../shared/sqlitePurge.js';
import { SqliteGroupCommit } from '../shared/sqliteGroupCommit.js';
import { BUSY_TIMEOUT_MS } from '../shared/sqliteWriteLock.js';
import { checkNote, JOB_TAG_BYTES, type RecordLedger } from './recordLedger.js';

/**
 * The embedded ledger: `DATA_DIR/record-ledger.sqlite`, a file of its own (a batch never waits on
 * the read models' write lock), one row per fingerprint and job that claimed it, with whether the
 * job committed it (its record is in the log). The primary key (fingerprint, job) answers both of
 * a note's questions (this job's claim? another job's commit?) from one index range.
 *
 * Notes and commits asked for in the same turn (the jobs an ETL thread runs at once) share one
 * transaction and so one fsync (SqliteGroupCommit), each in its own savepoint: each caller is
 * answered only once the group is durable, so a claim is still on disk before the records it
 * covers are appended, and a commit before the job's outcome is recorded.
 */
export class SqliteRecordLedger implements RecordLedger {
  readonly backend = 'sqlite' as const;
  readonly unclusteredRows: boolean;
  private readonly db: Database.Database;
  private readonly claimsOf: Database.Statement<[Buffer], { job: Buffer; committed: number }>;
  private readonly insert: Database.Statement<[Buffer, Buffer]>;
  private readonly markCommitted: Database.Statement<[Buffer, Buffer]>;
  private readonly writes: SqliteGroupCommit;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    // As the event log: a claim or a commit acknowledged is on disk, so that after a power loss
    // the ledger never answers a resumed run otherwise than it answered the run it resumes.
    this.db.pragma('synchronous = FULL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    eraseOnDelete(this.db);
    this.db.exec('CREATE TABLE IF NOT EXISTS claims (fp BLOB NOT NULL, job BLOB NOT NULL, committed INTEGER NOT NULL, PRIMARY KEY (fp, job)) WITHOUT ROWID');
    this.unclusteredRows = this.migrate();
    this.claimsOf = this.db.prepare('SELECT job, committed FROM claims WHERE fp = ?');
    this.insert = this.db.prepare('INSERT OR IGNORE INTO claims (fp, job, committed) VALUES (?, ?, 0)');
    this.markCommitted = this.db.prepare('UPDATE claims SET committed = 1 WHERE fp = ? AND job = ?');
    this.writes = new SqliteGroupCommit(this.db);
  }

  /**
   * Rows of the earlier versions (`fingerprints`: one per fingerprint, its first job's) become
   * committed claims, as they counted before. Those of the first version (user_version 0) named
   * their job in the clear (its upload stream, hence its user): they get a tag that names nobody.
   * A file that holds rows when it reaches version 3 holds unclustered fingerprints (the port's
   * `unclusteredRows`), for good: that is remembered in `meta`. Answers whether it does.
   */
  private migrate(): boolean {
    this.db.exec('CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID');
    const version = () => this.db.pragma('user_version', { simple: true }) as number;
    if (version() < 3) {
      this.db
        .transaction(() => {
          // Another connection to the file may have migrated it meanwhile.
          if (version() >= 3) return;
          const old = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fingerprints'").get();
          if (old) {
            this.db
              .prepare("INSERT OR IGNORE INTO claims (fp, job, committed) SELECT fp, CASE WHEN typeof(job) = 'text' THEN ? ELSE job END, 1 FROM fingerprints")
              .run(Buffer.alloc(JOB_TAG_BYTES));
            this.db.exec('DROP TABLE fingerprints');
          }
          if (this.db.prepare('SELECT 1 FROM claims LIMIT 1').get()) this.db.exec("INSERT OR IGNORE INTO meta (name, value) VALUES ('unclustered_rows', 1)");
          this.db.pragma('user_version = 3');
        })
        .immediate();
    }
    return this.db.prepare("SELECT 1 FROM meta WHERE name = 'unclustered_rows'").get() !== undefined;
  }

  async note(job: Buffer, fingerprints: readonly Buffer[], unclustered?: readonly Buffer[]): Promise<boolean[]> {
    checkNote(job, fingerprints, unclustered);
    if (fingerprints.length === 0) return [];
    const older = this.unclusteredRows ? unclustered : undefined;
    return this.writes.write(() =>
      fingerprints.map((fp, i) => {
        const claims = this.claimsOf.all(fp);
        if (claims.some((c) => job.equals(c.job))) return false;
        if (claims.some((c) => c.committed === 1)) return true;
        if (older) {
          // The older form's rows: this job's own claim of it (a run resumed across the upgrade)
          // answers false as before; another job's commit, true (nothing claimed then, as for any known record).
          const before = this.claimsOf.all(older[i]!);
          if (!before.some((c) => job.equals(c.job)) && before.some((c) => c.committed === 1)) return true;
        }
        this.insert.run(fp, job);
        return false;
      }),
    );
  }

  async commit(job: Buffer, fingerprints: readonly Buffer[]): Promise<void> {
    checkNote(job, fingerprints);
    if (fingerprints.length === 0) return;
    await this.writes.write(() => fingerprints.forEach((fp) => this.markCommitted.run(fp, job)));
  }

  async close(): Promise<void> {
    this.writes.close();
    this.db.close();
  }
}
