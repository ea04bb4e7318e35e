import type Database from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import { siblingModule, startWorker } from './workerThreads.js';

/** When the checkpointer looks at the log, and how large the log may grow (sqliteWalCheckpointThread.ts). */
export type WalCheckpointSettings = {
  /** Between two PASSIVE checkpoints: the log holds about this long's writes, and restarts at most this often. */
  everyMs: number;
  /** A log larger than this after a PASSIVE checkpoint (writes kept it from starting over) is started over with RESTART. */
  restartBytes: number;
  /** A log file larger than this is emptied (TRUNCATE) when it starts over: readers kept it from starting over for a while. */
  boundBytes: number;
  /** How long RESTART waits for readers to leave the log, holding writers off meanwhile. */
  restartWaitMs: number;
};

export const WAL_CHECKPOINTS: WalCheckpointSettings = { everyMs: 1000, restartBytes: 16 * 1024 * 1024, boundBytes: 64 * 1024 * 1024, restartWaitMs: 100 };

/** SQLite's own: a connection checkpoints after its commit once the log holds this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/**
 * Checkpoints a SQLite file's write-ahead log on a thread of its own, for a connection whose thread
 * must not wait on the disk (issue 37: the HTTP thread's read store). By default SQLite checkpoints
 * inside the commit that finds the log past 1,000 pages, on the committing thread: it copies the
 * pages into the database and fsyncs the log and the database, 5-60 ms during an upload burst. The
 * connection given here stops doing that (`wal_autocheckpoint = 0`); the thread's connection runs
 * a PASSIVE checkpoint every `everyMs` instead (docs/store-threads.md, "The read store's
 * checkpoints"). Should the thread fail, the connection checkpoints inline again.
 */
export class WalCheckpointer {
  private stopping = false;
  private readonly ended: Promise<void>;

  private constructor(
    private readonly db: Database.Database,
    private readonly worker: Worker,
  ) {
    this.ended = new Promise((resolve) => {
      worker.once('error', () => this.inlineAgain());
      worker.once('exit', () => {
        this.inlineAgain();
        resolve();
      });
    });
  }

  /** `db`: the connection that leaves its checkpoints to the thread; `path`: its file. */
  static start(path: string, db: Database.Database, settings: WalCheckpointSettings = WAL_CHECKPOINTS): WalCheckpointer {
    db.pragma('wal_autocheckpoint = 0');
    const worker = startWorker(siblingModule(import.meta.url, 'sqliteWalCheckpointThread'), { workerData: { path, ...settings } });
    // An idle checkpointer does not keep the process alive.
    worker.unref();
    return new WalCheckpointer(db, worker);
  }

  /** Ends the thread (a checkpoint under way finishes first). */
  async stop(): Promise<void> {
    this.stopping = true;
    // Held until it ends: awaiting an unreferenced thread, a closing process would otherwise end first, exit code 0.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.ended;
  }

  private inlineAgain(): void {
    if (this.stopping || !this.db.open) return;
    this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  }
}
