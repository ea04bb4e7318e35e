import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { ProblemBody } from './problems.js';

/** How long a refused connection may keep sending before it is cut: its bytes are read and dropped meanwhile. */
const LINGER_MS = 2_000;

function statusOf(code: string | undefined): { status: number; detail: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, detail: 'the request line and headers exceed the size this server accepts (16 KiB)' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return { status: 408, detail: 'the request was not received in time' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, detail: 'the request line has an unknown method' };
    default:
      return { status: 400, detail: 'the request could not be parsed as HTTP/1.1' };
  }
}

/**
 * Errors Node's HTTP parser raises before any route runs (oversized headers or URLs, malformed
 * request lines, timeouts) are answered like every other error: RFC 9457 problem+json with a
 * request id (spec "Errors" 1). The answer is sent with a FIN, and what the client still sends is
 * read and dropped for a moment before the socket goes, so unread bytes do not turn the close into
 * a reset that would swallow the answer.
 */
export function problemClientErrorHandler(log: FastifyBaseLogger) {
  return (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, detail } = statusOf(err.code);
    const requestId = randomUUID();
    log.debug({ code: err.code, request_id: requestId }, 'client error before routing');
    if (socket.writable) {
      const body: ProblemBody = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, request_id: requestId };
      const json = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
          `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${json}`,
      );
    }
    socket.on('error', () => undefined);
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
