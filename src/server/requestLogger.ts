import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Bindings = Record<string, unknown>;

/**
 * `request.log` made only when a request logs something at a level that is written. fastify makes
 * a pino child per request (with its request id) whether or not anything is logged, and building
 * one (its bindings serialised, the redaction paths applied) was about 2 % of a
 * `GET /v1/users/{id}` (issue 27). Lines that are written are the same: the child is pino's own,
 * made on the first of them, with the same bindings.
 */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: { level?: string }): FastifyBaseLogger {
  // A route with its own log level would need that level compared here: such a route gets its child at once.
  if (options.level !== undefined) return logger.child(bindings, options);
  return new LazyRequestLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger;
}

class LazyRequestLogger {
  private made: Logger | null = null;
  constructor(
    private readonly parent: Logger,
    private readonly own: Bindings,
    private readonly options: object,
  ) {}

  private real(): Logger {
    return (this.made ??= this.parent.child(this.own, this.options));
  }

  private log(level: Level, args: unknown[]): void {
    if (this.made || this.parent.isLevelEnabled(level)) (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.real().level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }
  child(bindings: Bindings, options?: object): Logger {
    return this.real().child(bindings, options);
  }
  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
  silent(): void {}
}
