import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from './problems.js';
import { closeInsteadOfDraining, hasBody } from './unreadBodies.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The longest the whole body of a request may take to arrive, however steadily it trickles
     * (UPLOAD_BODY_DEADLINE_S on the upload routes): past it, 408 and the connection closed.
     */
    bodyDeadlineMs?: number;
  }
}

/**
 * Progress is looked at this many times per idle period: a stall is acted on at most half a
 * period late. A timer per transfer, not a timer reset per chunk.
 */
const LOOKS_PER_PERIOD = 4;

/**
 * contracts §18: a request body of which no byte arrived for `idleMs` is answered 408 and its
 * connection closed, so a client that sends headers and a few bytes cannot hold what the request
 * holds (an upload slot, a buffer) for longer than that. A route may also set a deadline for the
 * whole body (`config.bodyDeadlineMs`): a body sent a byte at a time keeps moving, never idle.
 *
 * Progress is the socket's count of bytes read (Node's HTTP parser takes the bytes from the
 * socket itself, and watching the request's own 'data' would start its flow before its reader
 * is there). Bytes that arrived and wait in the request's buffer mean the service is slow to
 * read, not the client to send: that is never a stall.
 */
export function closeStalledBodies(app: FastifyInstance, idleMs: number): void {
  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    // An injected request (light-my-request) has a stand-in socket: no bytes to count, nothing to close.
    if (!raw.complete && raw.socket instanceof Socket && hasBody(raw)) watchBody(request, reply, idleMs, request.routeOptions.config?.bodyDeadlineMs);
    done();
  });
}

function watchBody(request: FastifyRequest, reply: FastifyReply, idleMs: number, deadlineMs: number | undefined): void {
  const raw = request.raw;
  const socket = raw.socket;
  const started = Date.now();
  let seen = socket.bytesRead;
  let movedAt = started;
  const look = () => {
    if (raw.complete || raw.destroyed) return stop();
    const now = Date.now();
    if (deadlineMs !== undefined && now - started >= deadlineMs) {
      stop();
      return refuse(request, reply, `the request body did not arrive within ${deadlineMs / 1000} s`);
    }
    if (socket.bytesRead !== seen || raw.readableLength > 0) {
      seen = socket.bytesRead;
      movedAt = now;
    } else if (now - movedAt >= idleMs) {
      stop();
      refuse(request, reply, `no byte of the request body arrived for ${idleMs / 1000} s`);
    }
  };
  const timer = setInterval(look, Math.max(1, Math.min(idleMs, deadlineMs ?? idleMs) / LOOKS_PER_PERIOD));
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    raw.off('end', stop);
    reply.raw.off('close', stop);
  };
  raw.once('end', stop);
  reply.raw.once('close', stop);
}

/**
 * 408 and the connection closed once the answer is out (no draining: more of the body is what
 * the answer refuses). Whatever was reading the body then fails with the connection; an answer
 * already under way is cut instead.
 */
function refuse(request: FastifyRequest, reply: FastifyReply, detail: string): void {
  const socket = request.raw.socket;
  if (reply.raw.headersSent || reply.sent) {
    socket.destroy();
    return;
  }
  closeInsteadOfDraining(request.raw);
  reply.raw.once('finish', () => socket.destroy());
  void sendProblem(request, reply, 408, detail, { connection: 'close' });
}

/**
 * contracts §18: a response whose reader stopped taking it (nothing it was sent drained for
 * `idleMs`, while more waits to be written) is destroyed, so its 'close' frees whatever the
 * response held (an archive slot). A response the service is slow to produce is not stalled:
 * only a write that waits for the reader counts.
 */
export function closeIfReaderStalls(res: ServerResponse, idleMs: number): void {
  let drains = 0;
  let seen = 0;
  let waitingSince: number | null = null;
  const onDrain = () => drains++;
  const look = () => {
    if (!res.writableNeedDrain || drains !== seen) {
      seen = drains;
      waitingSince = null;
      return;
    }
    const now = Date.now();
    waitingSince ??= now;
    if (now - waitingSince >= idleMs) {
      stop();
      res.destroy();
    }
  };
  const timer = setInterval(look, Math.max(1, idleMs / LOOKS_PER_PERIOD));
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    res.off('drain', onDrain);
    res.off('close', stop);
  };
  res.on('drain', onDrain);
  res.once('close', stop);
}
