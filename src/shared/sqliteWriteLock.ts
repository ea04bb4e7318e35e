/**
 * SQLite lets one connection write at a time; in WAL mode readers never wait. The service opens
 * each database file from several threads (HTTP, projector, ETL), and a projector transaction
 * can hold the write lock for a few hundred milliseconds. SQLite's own busy handler would wait
 * for it by sleeping inside the statement, which on the HTTP thread stalls every request. So
 * connections keep a busy timeout of a couple of milliseconds, and writes that still find the
 * lock taken are retried here after an asynchronous pause: the thread goes on serving meanwhile.
 */
export const BUSY_TIMEOUT_MS = 2;
const GIVE_UP_MS = 60_000;

export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/** Runs a synchronous write (a whole transaction), retrying it while the write lock is taken elsewhere. */
export async function withWriteLock<T>(write: () => T): Promise<T> {
  const started = Date.now();
  let pause = 1;
  for (;;) {
    try {
      return write();
    } catch (err) {
      if (!isBusy(err) || Date.now() - started > GIVE_UP_MS) throw err;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = nextPause(pause);
    }
  }
}

/** The next pause after `pause` when retrying by timer (the schedule withWriteLock follows). */
export const nextPause = (pause: number): number => Math.min(Math.max(1, pause * 2), 16);
