import type { FastifyReply } from 'fastify';

/**
 * A large answer's bytes, written once as UTF-8 into a buffer that is kept for the next answers
 * (issue 38: the page of 1,000 samples over HTTP).
 *
 * Profiled (BENCHMARKS.md, "the page and the statistics over HTTP"), a page's ~600 KB answer sent
 * as a JavaScript string cost more than reading and rendering it: fastify measured the string
 * (`Buffer.byteLength`, a pass over it) for Content-Length, then Node's socket write encoded it
 * into freshly allocated memory (`writev`; with `MALLOC_MMAP_THRESHOLD_` at 128 KiB, as `npm start`
 * sets it, that is a fresh mapping and a page fault per 4 KiB, every answer), and the page string
 * itself lived in V8's large-object space, which counts as old generation and brought the
 * mark-compacts. Written here, the text reaches memory once, in pieces of a few KB each (short
 * strings that die young), into memory already mapped; its length is known without a pass; and
 * the socket takes the Buffer as it is.
 *
 * A buffer goes back to the pool when its answer is written (`finish`: the last byte was handed
 * to the kernel, nothing holds it any more). An answer that does not finish (the client went
 * away, a handler threw between taking and sending) leaves its buffer to the garbage collector:
 * a buffer is never handed out again while a write may still read it.
 */
export class AnswerBytes {
  private buf: Buffer;
  private len = 0;

  constructor() {
    this.buf = pool.pop() ?? Buffer.allocUnsafe(FIRST_BYTES);
  }

  /** Appends `s` as UTF-8. */
  write(s: string): void {
    const room = this.buf.length - this.len;
    // A UTF-16 code unit is at most 3 UTF-8 bytes: only a piece that might not fit is measured.
    if (s.length * 3 > room) {
      const need = Buffer.byteLength(s);
      if (need > room) this.grow(need);
    }
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  /** The bytes written so far (a view of the kept buffer: valid until the answer is written). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.len);
  }

  /** Hands the buffer back for the next answer; the bytes must not be read after this. */
  release(): void {
    keep(this.buf);
    this.buf = EMPTY;
    this.len = 0;
  }

  private grow(need: number): void {
    const next = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.len + need));
    this.buf.copy(next, 0, 0, this.len);
    keep(this.buf);
    this.buf = next;
  }
}

/**
 * Sends `out` as the answer's body (Content-Length is its length) and hands its buffer back once
 * the answer is written. The reply's status and headers are the caller's, set before.
 */
export function sendAnswerBytes(reply: FastifyReply, out: AnswerBytes): FastifyReply {
  releaseWhenWritten(reply, out);
  return reply.send(out.bytes());
}

/** `out`'s buffer back to the pool once the answer is written (`finish`), never before. */
function releaseWhenWritten(reply: FastifyReply, out: AnswerBytes): void {
  reply.raw.once('finish', () => out.release());
}

/** A first buffer holds a page of 1,000 samples with room to spare (~600 KB measured). */
const FIRST_BYTES = 1 << 20;
/** Kept buffers: at most this many (answers written at once beyond it allocate their own) … */
const KEPT = 4;
/** … and none larger than this (a rare huge answer does not stay resident). */
const KEPT_MAX_BYTES = 4 << 20;
const EMPTY = Buffer.alloc(0);
const pool: Buffer[] = [];

function keep(buf: Buffer): void {
  if (buf.length && buf.length <= KEPT_MAX_BYTES && pool.length < KEPT) pool.push(buf);
}
