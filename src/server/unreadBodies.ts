import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

const MiB = 1024 * 1024;
/** A refused body is read and dropped for at most this many bytes after the answer; then the connection is cut. */
export const DRAIN_MAX_BYTES = 64 * MiB;
/** …and for at most this long. */
export const DRAIN_MAX_MS = 30_000;

/**
 * Answers given before the request's body was read (a 413 over the size limit, a 401 decided
 * from the headers, a 415) keep the connection and read the rest of the body, dropping it, so
 * the client gets the answer instead of a reset mid-upload (EPIPE) (issue 20).
 *
 * fastify marks a body it refused while reading with `Connection: close`, and Node then closes
 * the socket as soon as the answer is written: whatever the client still sends meets a closed
 * socket, and a client that writes the whole body before it reads (most do) never sees the
 * answer. Here the header goes, the connection stays open, and the body is drained, bounded by
 * DRAIN_MAX_BYTES and DRAIN_MAX_MS (then the connection is cut: the answer went first). When
 * the connection must close anyway (the client asked for it, HTTP/1.0), the answer waits until
 * the body is drained, within the same bounds, so the close does not reset the upload.
 */
export function drainUnreadBodies(app: FastifyInstance): void {
  // Written with `done` rather than async: a request whose body was read (nearly all) costs no promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    if (raw.complete || raw.readableEnded || raw.destroyed || !hasBody(raw) || notDrained.has(raw)) return done(null, payload);
    if (String(reply.getHeader('connection') ?? '').toLowerCase() === 'close') reply.removeHeader('connection');
    const drained = drain(raw, reply.raw);
    if (reply.raw.shouldKeepAlive) return done(null, payload);
    void drained.then(() => done(null, payload));
  });
}

const notDrained = new WeakSet<IncomingMessage>();

/**
 * The body of `raw` is not to be drained after its answer: its connection closes instead (a body
 * that stalled, src/server/stalledTransfers.ts: waiting for more of it is what the answer refuses).
 */
export function closeInsteadOfDraining(raw: IncomingMessage): void {
  notDrained.add(raw);
}

/**
 * Whether the request announced a body (RFC 9112 §6.3: Content-Length or Transfer-Encoding). A
 * request without one is answered before Node marks it complete when its answer is written in the
 * same turn as its headers were read (a kept answer): there is nothing to drain then.
 */
export function hasBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Reads and drops the rest of the body; resolves once it ended, or was cut at a bound. */
function drain(raw: IncomingMessage, answer: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    let left = DRAIN_MAX_BYTES;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', onData);
      resolve();
    };
    const cut = () => {
      done();
      // Past the bounds the client is not sending a body anyone could take: once the answer is
      // out, the connection goes.
      const socket = raw.socket;
      if (answer.writableFinished) socket?.destroy();
      else answer.once('finish', () => socket?.destroy());
    };
    const onData = (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) cut();
    };
    const timer = setTimeout(cut, DRAIN_MAX_MS);
    timer.unref();
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}
