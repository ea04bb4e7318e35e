import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/app/logger.js';
import { lazyChildLoggerFactory } from '../../src/server/requestLogger.js';

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
