import Database from 'better-sqlite3';
import { eraseOnDelete } from '../shared/sqlitePurge.js';
import { SqliteGroupCommit } from '../shared/sqliteGroupCommit.js';
import { BUSY_TIMEOUT_MS, isBusy } from '../shared/sqliteWriteLock.js';
import { checkNote, EARLIER_FINGERPRINT_BYTES, shortened, type RecordLedger } from './recordLedger.js';

/** The file's layout (`user_version`): 4 since issue 38's short rows; `migrate` converts the earlier ones. */
const LAYOUT = 4;
/** Job numbers an open ledger keeps in memory at most (SqliteRecordLedger `numbers`). */
export const KNOWN_JOBS = 1_000;

/**
 * The embedded ledger: `DATA_DIR/record-ledger.sqlite`, a file of its own (a batch never waits on
 * the read models' write lock), one row per fingerprint and job that claimed it. The primary key
 * (fingerprint, job) answers both of a note's questions (this job's claim? another job's commit?)
 * from one index range.
 *
 * A row is 11 bytes of fingerprint and one small integer (issue 38: 21 bytes a row on disk, 49
 * before): `job` is twice the job's number plus 1 once the job committed the row. A job's number
 * is its row in `jobs`, which holds its tag (an HMAC, as before: no job id in the clear), so the
 * 16 bytes of the tag are written once per job instead of once per record; the committed flag
 * costs no byte of its own.
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
  private readonly claimsOf: Database.Statement<[Buffer], { job: number }>;
  private readonly insert: Database.Statement<[Buffer, number]>;
  private readonly markCommitted: Database.Statement<[number, Buffer, number]>;
  private readonly addJob: Database.Statement<[Buffer]>;
  private readonly numberOf: Database.Statement<[Buffer], { n: number }>;
  private readonly writes: SqliteGroupCommit;
  /**
   * Job numbers known durable (hex tag → number): only those read back after their write committed.
   * At most KNOWN_JOBS, the oldest forgotten first: a long-running ETL thread sees a job per upload,
   * and a forgotten number is read again from `jobs` (one indexed read).
   */
  private readonly numbers = new Map<string, number>();

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    // As the event log: a claim or a commit acknowledged is on disk, so that after a power loss
    // the ledger never answers a resumed run otherwise than it answered the run it resumes.
    this.db.pragma('synchronous = FULL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    eraseOnDelete(this.db);
    this.unclusteredRows = this.migrate();
    this.claimsOf = this.db.prepare('SELECT job FROM claims WHERE fp = ?');
    this.insert = this.db.prepare('INSERT OR IGNORE INTO claims (fp, job) VALUES (?, ?)');
    // OR IGNORE: a converted file may hold both the claim and the commit of one short fingerprint
    // (two earlier fingerprints that shortened alike); the commit is there already.
    this.markCommitted = this.db.prepare('UPDATE OR IGNORE claims SET job = ? WHERE fp = ? AND job = ?');
    this.addJob = this.db.prepare('INSERT OR IGNORE INTO jobs (tag) VALUES (?)');
    this.numberOf = this.db.prepare('SELECT n FROM jobs WHERE tag = ?');
    this.writes = new SqliteGroupCommit(this.db);
  }

  /**
   * Brings a file of an earlier layout to this one, once, in one transaction (another connection
   * may be doing it at once: the second finds it done). Version 0 (`fingerprints`: one row per
   * fingerprint, its first job's, named in the clear) and versions 1-2 (`claims` of 20-byte
   * fingerprints and 16-byte tags, before clustering) and 3 (the same, clustered) all become rows
   * of the `shortened` fingerprint and the job's number; rows of version 0 count as committed, by
   * a job whose tag names nobody. A file that holds rows when it reaches version 3 holds
   * unclustered fingerprints (the port's `unclusteredRows`), for good: that is remembered in
   * `meta`. Answers whether it does.
   */
  private migrate(): boolean {
    const version = () => this.db.pragma('user_version', { simple: true }) as number;
    const exists = (table: string) => this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
    let converted = false;
    if (version() < LAYOUT) {
      this.db
        .transaction(() => {
          if (version() >= LAYOUT) return;
          this.db.exec('CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID');
          const before = version();
          const earlier: string[] = [];
          if (exists('claims')) {
            this.db.exec('ALTER TABLE claims RENAME TO claims_earlier');
            earlier.push('SELECT fp AS fp, job AS job, committed AS committed FROM claims_earlier');
          }
          if (exists('fingerprints')) earlier.push("SELECT fp AS fp, CASE WHEN typeof(job) = 'text' THEN zeroblob(16) ELSE job END AS job, 1 AS committed FROM fingerprints");
          this.db.exec('CREATE TABLE jobs (n INTEGER PRIMARY KEY, tag BLOB NOT NULL UNIQUE)');
          this.db.exec('CREATE TABLE claims (fp BLOB NOT NULL, job INTEGER NOT NULL, PRIMARY KEY (fp, job)) WITHOUT ROWID');
          if (earlier.length > 0) {
            this.db.function('shortened', { deterministic: true }, (fp: unknown) => shortened(fp as Buffer));
            this.db.exec(`CREATE TEMP TABLE earlier AS ${earlier.join(' UNION ALL ')}`);
            this.db.exec('INSERT OR IGNORE INTO jobs (tag) SELECT DISTINCT job FROM earlier');
            // A converted row keeps its answers: its `shortened` fingerprint, its job's number, its flag.
            this.db.exec(
              `INSERT OR IGNORE INTO claims (fp, job) SELECT shortened(e.fp), j.n * 2 + max(e.committed) FROM earlier e JOIN jobs j ON j.tag = e.job WHERE length(e.fp) = ${EARLIER_FINGERPRINT_BYTES} GROUP BY 1, j.n`,
            );
            const any = this.db.prepare('SELECT 1 FROM earlier LIMIT 1').get() !== undefined;
            // Rows that reach version 3 here were written before clustering.
            if (any && before < 3) this.db.exec("INSERT OR IGNORE INTO meta (name, value) VALUES ('unclustered_rows', 1)");
            this.db.exec('DROP TABLE earlier');
            this.db.exec('DROP TABLE IF EXISTS claims_earlier');
            this.db.exec('DROP TABLE IF EXISTS fingerprints');
            converted = true;
          }
          this.db.pragma(`user_version = ${LAYOUT}`);
        })
        .immediate();
    }
    // The earlier rows' pages are free now (zeroed: secure_delete); the file gives them back, so
    // an upgraded ledger is as small as a new one. Another connection reading the file meanwhile
    // (the other ETL threads, opening) makes that wait or fail: then the pages are reused as it grows.
    if (converted) {
      try {
        this.db.exec('VACUUM');
      } catch (err) {
        if (!isBusy(err)) throw err;
      }
    }
    return this.db.prepare("SELECT 1 FROM meta WHERE name = 'unclustered_rows'").get() !== undefined;
  }

  /** `job`'s number: from memory once known durable, else read or given in the write (`fresh`: given now, not durable yet). */
  private numberIn(job: Buffer, create: boolean): { n: number | undefined; fresh: boolean } {
    const known = this.numbers.get(job.toString('hex'));
    if (known !== undefined) return { n: known, fresh: false };
    const found = this.numberOf.get(job);
    if (found || !create) return { n: found?.n, fresh: false };
    this.addJob.run(job);
    return { n: this.numberOf.get(job)!.n, fresh: true };
  }

  /** Remembers a job's number once the write that read it is durable. */
  private remember(job: Buffer, n: number | undefined): void {
    if (n === undefined) return;
    const tag = job.toString('hex');
    this.numbers.delete(tag);
    this.numbers.set(tag, n);
    if (this.numbers.size > KNOWN_JOBS) this.numbers.delete(this.numbers.keys().next().value!);
  }

  async note(job: Buffer, fingerprints: readonly Buffer[], unclustered?: readonly Buffer[]): Promise<boolean[]> {
    checkNote(job, fingerprints, unclustered);
    if (fingerprints.length === 0) return [];
    const older = this.unclusteredRows ? unclustered : undefined;
    const { answers, n } = await this.writes.write(() => {
      const { n } = this.numberIn(job, true);
      const mine = (row: { job: number }) => Math.floor(row.job / 2) === n;
      const committed = (row: { job: number }) => (row.job & 1) === 1;
      const answers = fingerprints.map((fp, i) => {
        const claims = this.claimsOf.all(fp);
        if (claims.some(mine)) return false;
        if (claims.some(committed)) return true;
        if (older) {
          // The older form's rows: this job's own claim of it (a run resumed across the upgrade)
          // answers false as before; another job's commit, true (nothing claimed then, as for any known record).
          const before = this.claimsOf.all(older[i]!);
          if (!before.some(mine) && before.some(committed)) return true;
        }
        this.insert.run(fp, n! * 2);
        return false;
      });
      return { answers, n };
    });
    this.remember(job, n);
    return answers;
  }

  async commit(job: Buffer, fingerprints: readonly Buffer[]): Promise<void> {
    checkNote(job, fingerprints);
    if (fingerprints.length === 0) return;
    const n = await this.writes.write(() => {
      // A job without a number never claimed anything: nothing of it to commit.
      const { n } = this.numberIn(job, false);
      if (n !== undefined) for (const fp of fingerprints) this.markCommitted.run(n * 2 + 1, fp, n * 2);
      return n;
    });
    this.remember(job, n);
  }

  async close(): Promise<void> {
    this.writes.close();
    this.db.close();
  }
}
