import type { Logger } from 'pino';

/** How long a stop may take before the process exits anyway (contracts §17, issue 36: "stops within 10 s"). */
export const SHUTDOWN_DEADLINE_MS = 10_000;
/** The exit code of a process ended by a second SIGINT, as shells report a ctrl-C (128 + 2). */
export const FORCED_EXIT_CODE = 130;

export type ShutdownOptions = {
  log: Logger;
  /** What the stop waits for now (running imports, other jobs, pulls, open requests), non-zero counts only. */
  pending: () => Record<string, number>;
  /** Closes the service: stops taking work, hands running jobs back, closes its stores. */
  stop: () => Promise<void>;
  exit: (code: number) => void;
  deadlineMs?: number;
};

/**
 * The handler of SIGINT and SIGTERM (issue 36 point 7: a busy service logged nothing for 31.7 s
 * and ignored a second ctrl-C). The first signal says at once what the stop waits for and starts
 * it; a stop still running after the deadline is left and the process exits 1 (jobs it held are
 * taken up by another process or the next start once their leases run out). A second signal
 * exits at once with 130, as an interrupted command does.
 */
export function stopOnSignals(o: ShutdownOptions): (signal: NodeJS.Signals) => void {
  const deadlineMs = o.deadlineMs ?? SHUTDOWN_DEADLINE_MS;
  let stopping = false;
  return (signal) => {
    if (stopping) {
      o.log.warn({ signal, waiting_for: o.pending() }, 'second signal: exiting at once without waiting');
      return o.exit(FORCED_EXIT_CODE);
    }
    stopping = true;
    const waitingFor = o.pending();
    o.log.info(
      { signal, waiting_for: waitingFor, deadline_s: deadlineMs / 1000 },
      `shutting down: ${describePending(waitingFor)}; at most ${deadlineMs / 1000} s (press ctrl-C again to exit at once)`,
    );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), deadlineMs);
      timer.unref();
    });
    void Promise.race([o.stop().then(() => 'stopped' as const), deadline]).then(
      (how) => {
        clearTimeout(timer);
        if (how === 'stopped') {
          o.log.info('stopped');
          return o.exit(0);
        }
        o.log.warn({ waiting_for: o.pending() }, `the stop did not finish within ${deadlineMs / 1000} s: exiting; jobs still held are resumed when their leases run out`);
        o.exit(1);
      },
      (err: unknown) => {
        clearTimeout(timer);
        o.log.error({ err }, 'the stop failed: exiting');
        o.exit(1);
      },
    );
  };
}

/** "waiting for 1 import, 2 open requests", or "nothing running". */
export function describePending(pending: Record<string, number>): string {
  const parts = Object.entries(pending)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${n === 1 ? what.replace(/s$/, '') : what}`);
  return parts.length === 0 ? 'nothing running' : `waiting for ${parts.join(', ')}`;
}
