import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';

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

/**
 * One line per answered request, `request completed`, with the request id, the method and matched
 * route (logger.ts's `req` serializer), the status and the time taken; fastify's own controller
 * writes two (`incoming request` first) through the request's child logger. At the default level
 * (info) those two lines were a fifth of the HTTP thread's time on `GET /v1/users/{id}` (issue 37),
 * most of it the redaction pass over their objects.
 *
 * The line is written without that pass: every field in it is one this function sets from values
 * that cannot hold a secret or a health value (an id the service made or a caller's id matched
 * against `[A-Za-z0-9._-]`, the method, the route's pattern, a number). Everything else about a
 * request (errors, warnings, what handlers log) goes through `request.log` and is redacted as before.
 *
 * The line is also put together here, from one template, rather than by pino's general path
 * (serializer, a stringify per field, its write): pino's own pieces (the level's prefix, the time,
 * the bindings, the `req` serializer, the stream) are taken from the logger, so the line is the
 * one pino would write (test/server/requestLogger.test.ts), for about a third of the cost (issue 37). A logger that
 * reshapes its lines (a mixin, a `log` formatter, a stream hook, another message key) gets pino's
 * path instead.
 */
export class RequestLineController extends LogController {
  private readonly lines: Logger;
  private readonly template: PinoParts | null;

  constructor(log: FastifyBaseLogger) {
    super();
    this.lines = (log as unknown as Logger).child({}, { redact: [] });
    this.template = plainParts(this.lines);
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error || !this.lines.isLevelEnabled('info')) return super.requestCompleted(error, request, reply);
    const t = this.template;
    if (t === null) {
      this.lines.info({ reqId: request.id, req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
      return;
    }
    const took = reply.elapsedTime;
    t[S.streamSym].write(
      `${t[S.lsCacheSym][INFO]}${t[S.timeSym]()}${t[S.chindingsSym]},"reqId":${JSON.stringify(request.id)},"req":${JSON.stringify(t[S.serializersSym].req(request))},` +
        `"res":{"statusCode":${reply.statusCode}},"responseTime":${Number.isFinite(took) ? took : null},"msg":"request completed"}\n`,
    );
  }
}

const S = pino.symbols;
const INFO = 30;
/** The pieces of a pino logger its own line writer uses (pino.symbols: public, for this kind of use). */
type PinoParts = {
  [S.streamSym]: { write(line: string): unknown };
  [S.lsCacheSym]: Record<number, string>;
  [S.timeSym]: () => string;
  [S.chindingsSym]: string;
  /** The logger's `req` serializer (logger.ts's requestForLog): what a request is as logged. */
  [S.serializersSym]: { req: (request: FastifyRequest) => unknown };
};

/** `logger`'s pieces when its lines are pino's plain shape (nothing rewrites them), else null. */
function plainParts(logger: Logger): PinoParts | null {
  const l = logger as unknown as Record<symbol, unknown> & PinoParts;
  const formatters = l[S.formattersSym] as { log?: unknown } | undefined;
  const hooks = l[S.hooksSym] as { streamWrite?: unknown } | undefined;
  const stream = l[S.streamSym] as unknown as Record<symbol, unknown>;
  const plain = typeof l[S.serializersSym]?.req === 'function' && !l[S.mixinSym] && !formatters?.log && !hooks?.streamWrite && l[S.messageKeySym] === 'msg' && !l[(S as unknown as Record<string, symbol>).msgPrefixSym!] && stream[S.needsMetadataGsym] !== true;
  return plain ? l : null;
}
