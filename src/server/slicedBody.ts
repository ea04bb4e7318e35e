import type { Readable } from 'node:stream';
import { HttpProblem } from './problems.js';

/** Work on a body's bytes runs at most about this long before other requests get a turn. */
const SLICE_MS = 4;

/**
 * Feeds a request body to a push parser as it arrives, without holding it whole: at most `limit`
 * bytes (413 above, before reading when Content-Length says so), and the parsing done in steps
 * that give the event loop back every SLICE_MS, so a large body never stalls other requests.
 * `write` gets the chunks in order and may throw (the body is refused with that error).
 *
 * A refusal stops reading but leaves the stream alone: destroying it would reset the connection
 * before the answer; the unread rest is drained by `drainUnreadBodies`.
 */
export function feedBody(stream: Readable, o: { declaredLength: number; limit: number; write: (chunk: Buffer) => void; step?: number }): Promise<void> {
  const tooLarge = () => new HttpProblem(413, `the request body is larger than this route accepts (${o.limit} bytes)`);
  if (o.declaredLength > o.limit) return Promise.reject(tooLarge());
  const step = o.step ?? 64 * 1024;
  return new Promise((resolve, reject) => {
    let received = 0;
    let settled = false;
    let sliceStart = performance.now();
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', finish);
      if (err) reject(err);
      else resolve();
    };
    const feed = async (chunk: Buffer) => {
      received += chunk.length;
      if (received > o.limit) throw tooLarge();
      for (let i = 0; i < chunk.length && !settled; i += step) {
        o.write(chunk.subarray(i, i + step));
        if (performance.now() - sliceStart > SLICE_MS) {
          await new Promise((r) => setImmediate(r));
          sliceStart = performance.now();
        }
      }
    };
    // The chunk being parsed: the next waits for it (the stream is paused meanwhile), and so does the end.
    let pending: Promise<void> = Promise.resolve();
    const onData = (chunk: Buffer) => {
      stream.pause();
      pending = pending.then(() => feed(chunk));
      pending.then(
        () => {
          if (!settled) stream.resume();
        },
        (err: unknown) => finish(err),
      );
    };
    const onEnd = () => void pending.then(() => finish(), finish);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', finish);
    stream.resume();
  });
}
