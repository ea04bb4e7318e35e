import pino, { type Logger } from 'pino';

/** The service's standard output as `serviceStdout` opens it: pino's sonic-boom on fd 1. */
export type ServiceStdout = ReturnType<typeof pino.destination>;

/**
 * Standard output for the service process (main.ts): log lines and main.ts's own blocks (the
 * generated admin key, the demo's block) written through this one stream, in the order they were
 * written. Asynchronous (sonic-boom `sync: false`): a line is handed to a write on libuv's thread
 * pool instead of a `write(2)` on the HTTP thread (5 % of that thread on a small read at info,
 * issue 37); lines written while one write is under way go out together in the next. No minimum
 * length: the first line after a quiet spell is written at once, so a reader (a test, a log
 * shipper) sees it as promptly as before.
 *
 * What may be lost: the lines written since the last write started, if the process dies without
 * running its exit handlers (SIGKILL, an abort); pino flushes the rest synchronously on `exit`,
 * and a stop waits for `whenWritten` before exiting (docs/operator.md "Request logs").
 */
export function serviceStdout(): ServiceStdout {
  return pino.destination({ dest: 1, sync: false, minLength: 0 });
}

/**
 * Resolves once everything written to `stdout` so far is out (at once when nothing is under way),
 * or after `timeoutMs` if the reader does not take it (a stopped pipe must not keep a stop waiting).
 */
export function whenWritten(stdout: ServiceStdout, timeoutMs = 2_000): Promise<void> {
  // sonic-boom says whether a write is under way only through this field; 'drain' follows its end.
  if (!(stdout as unknown as { _writing: boolean })._writing) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    timer.unref();
    stdout.once('drain', done);
    function done() {
      clearTimeout(timer);
      stdout.off('drain', done);
      resolve();
    }
  });
}

/**
 * A request as logged: its method and the route it matched, never the URL it came with. Secrets
 * travel in some URLs (Garmin's inbound secret, Strava's and Withings' webhook tokens, a connect
 * session's link, an OAuth callback's `code` and `state`), so neither the path nor the query is
 * written; an unmatched request is logged without its path.
 */
export function requestForLog(req: { method?: string; routeOptions?: { url?: string }; id?: string }): Record<string, unknown> {
  return { method: req.method, route: req.routeOptions?.url ?? '(no route)' };
}

/**
 * JSON logs on stdout. Secrets and health values never reach a log line: request logging
 * records method, route and status only, and these paths are censored wherever they appear.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'api_key', 'token', 'secret', 'key', '*.api_key', '*.token', '*.secret', 'value', '*.value', 'body'],
        censor: '[redacted]',
      },
      serializers: { req: requestForLog },
    },
    destination,
  );
}
