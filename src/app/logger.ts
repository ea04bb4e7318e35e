import pino, { type Logger } from 'pino';

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
