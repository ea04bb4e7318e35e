import pino, { type Logger } from 'pino';

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
    },
    destination,
  );
}
