import type Database from 'better-sqlite3';
import { isBusy, nextPause } from './sqliteWriteLock.js';

const GIVE_UP_MS = 30_000;

/**
 * Connections to the service's SQLite files delete with `secure_delete` on: deleted rows and freed
 * pages are overwritten with zeros as they are freed, so no erased value lingers in the file
 * (docs/erasure.md).
 */
export function eraseOnDelete(db: Database.Database): void {
  db.pragma('secure_delete = ON');
}

/** One try at folding the write-ahead log into the database and emptying it: true once done. */
function truncatedLog(db: Database.Database): boolean {
  try {
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    return result?.busy === 0;
  } catch (err) {
    if (!isBusy(err)) throw err;
    return false;
  }
}

function giveUpAfter(started: number): void {
  if (Date.now() - started > GIVE_UP_MS) throw new Error('the write-ahead log could not be emptied: other connections kept it in use');
}

/**
 * Folds the write-ahead log into the database file and empties it (`wal_checkpoint(TRUNCATE)`):
 * the log still holds earlier images of the pages a deletion zeroed, and keeps them, past a
 * plain checkpoint, until overwritten. TRUNCATE needs a moment when no other connection (a thread
 * of this process, the CLI) is inside a read or write; it is retried after asynchronous pauses
 * until then.
 */
export async function emptyWriteAheadLog(db: Database.Database): Promise<void> {
  const started = Date.now();
  for (let pause = 1; !truncatedLog(db); pause = nextPause(pause)) {
    giveUpAfter(started);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** emptyWriteAheadLog for a thread that may block (the rewrite's own): it sleeps between tries. */
export function emptyWriteAheadLogBlocking(db: Database.Database): void {
  const started = Date.now();
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (let pause = 1; !truncatedLog(db); pause = nextPause(pause)) {
    giveUpAfter(started);
    Atomics.wait(sleeper, 0, 0, pause);
  }
}
