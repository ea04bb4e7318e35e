import { Writable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, requestForLog } from '../../src/app/logger.js';
import { lazyChildLoggerFactory, RequestLineController } from '../../src/server/requestLogger.js';

/**
 * Issue 27 ("GET /v1/users/{id}": a child logger per request): `request.log` makes pino's child only
 * when a line is written, and the lines it writes are the child's, request id included.
 */
function logger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger(level, sink) as unknown as FastifyBaseLogger, lines };
}

describe('request logger made on first use (issue 27)', () => {
  it('writes lines with the request id binding, as the pino child would, and redacts as the parent does', () => {
    const { log, lines } = logger('info');
    const child = lazyChildLoggerFactory(log, { reqId: 'r-1' }, {});
    child.info({ authorization: 'Bearer svc_sk_secret' }, 'incoming request');
    child.error('failed');
    expect(lines).toMatchObject([
      { level: 30, reqId: 'r-1', authorization: '[redacted]', msg: 'incoming request' },
      { level: 50, reqId: 'r-1', msg: 'failed' },
    ]);
  });

  it('makes no pino child while nothing is logged at a written level, and one on the first written line', () => {
    const { log, lines } = logger('warn');
    const spawn = vi.spyOn(log, 'child');
    const child = lazyChildLoggerFactory(log, { reqId: 'r-2' }, {});
    child.info('incoming request');
    child.debug('detail');
    expect(spawn).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    child.warn('slow');
    child.warn('slower');
    expect(spawn).toHaveBeenCalledTimes(1);
    expect(lines).toMatchObject([{ reqId: 'r-2', msg: 'slow' }, { reqId: 'r-2', msg: 'slower' }]);
    expect(child.level).toBe('warn');
  });

  it('gives a route with its own log level its child at once, at that level', () => {
    const { log, lines } = logger('warn');
    const child = lazyChildLoggerFactory(log, { reqId: 'r-3' }, { level: 'debug' });
    child.debug('detail');
    expect(lines).toMatchObject([{ reqId: 'r-3', msg: 'detail', level: 20 }]);
  });
});

describe('the request line written from its template is the line pino would write (issue 37; docs/operator.md "Request logs")', () => {
  function rawLogger(options: pino.LoggerOptions = {}) {
    const raw: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        raw.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = Object.keys(options).length ? pino({ ...options, serializers: { req: requestForLog } }, sink) : createLogger('info', sink);
    return { log, raw };
  }
  const request = (id: string, url?: string) => ({ id, method: 'GET', routeOptions: { url } }) as unknown as FastifyRequest;
  const reply = (statusCode: number, elapsedTime: number) => ({ statusCode, elapsedTime }) as unknown as FastifyReply;
  const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

  it('writes the same characters as pino: level, time, pid, hostname, request id, method, route, status, time taken, message', () => {
    const { log, raw } = rawLogger();
    const cases: [string, string | undefined, number, number][] = [
      ['req-1', '/v1/users/:id', 200, 0.8123],
      ['a"b\\c', undefined, 404, 12],
    ];
    for (const [id, url, status, took] of cases) {
      new RequestLineController(log as unknown as FastifyBaseLogger).requestCompleted(null, request(id, url), reply(status, took));
      log.child({}, { redact: [] }).info({ reqId: id, req: request(id, url), res: { statusCode: status }, responseTime: took }, 'request completed');
    }
    expect(raw).toHaveLength(4);
    expect(withoutTime(raw[0]!)).toBe(withoutTime(raw[1]!));
    expect(withoutTime(raw[2]!)).toBe(withoutTime(raw[3]!));
    expect(JSON.parse(raw[2]!)).toMatchObject({ level: 30, reqId: 'a"b\\c', req: { route: '(no route)' }, res: { statusCode: 404 }, msg: 'request completed' });
  });

  it('leaves a logger that reshapes its lines (a mixin) to pino, so the line keeps what the logger adds', () => {
    const { log, raw } = rawLogger({ level: 'info', mixin: () => ({ service: 'wellstream' }) });
    new RequestLineController(log as unknown as FastifyBaseLogger).requestCompleted(null, request('req-2', '/v1/users/:id'), reply(200, 1));
    expect(JSON.parse(raw[0]!)).toMatchObject({ service: 'wellstream', reqId: 'req-2', req: { method: 'GET', route: '/v1/users/:id' }, res: { statusCode: 200 }, msg: 'request completed' });
  });
});
