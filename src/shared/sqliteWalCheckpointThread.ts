import { parentPort, workerData } from 'node:worker_threads';
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { isBusy } from './sqliteWriteLock.js';
import type { WalCheckpointSettings } from './sqliteWalCheckpointer.js';

/**
 * The thread that checkpoints one SQLite file's write-ahead log for the connections that leave
 * it to it (sqliteWalCheckpointer.ts). Its connection only checkpoints: it never writes a row.
 */
const { path, everyMs, restartBytes, boundBytes, restartWaitMs } = workerData as WalCheckpointSettings & { path: string };
const port = parentPort!;

const db = new Database(path, { fileMustExist: true });
// The checkpoint's own syncs (the log before it copies, the database after) are what make the
// copied pages durable; the same level as the store's connections.
db.pragma('synchronous = NORMAL');
const frameBytes = (db.pragma('page_size', { simple: true }) as number) + 24;

type Outcome = { busy: number; log: number; checkpointed: number };

function checkpoint(mode: 'PASSIVE' | 'RESTART' | 'TRUNCATE'): Outcome | null {
  try {
    return (db.pragma(`wal_checkpoint(${mode})`) as Outcome[])[0] ?? null;
  } catch (err) {
    // Another connection is checkpointing or emptying the log (an erasure's): the next tick tries again.
    if (isBusy(err)) return null;
    throw err;
  }
}

/**
 * PASSIVE copies what no reader still needs into the database and never waits for anyone. But the
 * log starts over from its beginning only when a write begins with every frame copied and no
 * reader in the log, and with commits arriving while PASSIVE copies (the HTTP thread's, hundreds
 * a second in a burst) that almost never happens: the log grew to ~70 MiB in a burst. Past
 * `restartBytes`, RESTART takes the write lock (writers are answered busy and retry after an
 * asynchronous pause, sqliteGroupCommit.ts), copies the few frames PASSIVE left, waits up to
 * `restartWaitMs` for readers to leave the log, and has the next write start it over; a reader
 * still in it makes it give up until the next tick (none is tried while PASSIVE could not copy
 * everything: a reader on an older snapshot is in the log). The file keeps its size (shortening it
 * and growing it again cost up to 16 ms a time) unless it grew past `boundBytes` (readers kept the
 * log from starting over for a while): then TRUNCATE is tried every tick, and empties the file.
 */
function tick(): void {
  const passive = checkpoint('PASSIVE');
  if (!passive || passive.log * frameBytes <= restartBytes) return;
  const grown = logFileBytes() > boundBytes;
  // PASSIVE left frames a reader's older snapshot still needs: RESTART would hold writers off while it waits for that reader.
  if (passive.checkpointed < passive.log && !grown) return;
  db.pragma(`busy_timeout = ${restartWaitMs}`);
  try {
    checkpoint(grown ? 'TRUNCATE' : 'RESTART');
  } finally {
    db.pragma('busy_timeout = 0');
  }
}

function logFileBytes(): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

let timer: NodeJS.Timeout | null = null;
let stopped = false;
const schedule = () => {
  timer = setTimeout(() => {
    // An error other than busy ends the thread (its owner then checkpoints inline again).
    tick();
    schedule();
  }, everyMs);
};

function stop(): void {
  if (stopped) return;
  stopped = true;
  if (timer) clearTimeout(timer);
  timer = null;
  db.close();
  port.close();
}

port.on('message', (m: 'stop') => {
  if (m === 'stop') stop();
});
schedule();
