import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { ByteSource } from '../importSource.js';

/**
 * The two plain byte sources, for every format: a buffer (an upload small enough to sit in memory,
 * tests) and a file on disk (the CLI, benchmarks, a decompressed spill). The pipeline may hand a
 * decoder any other ByteSource (a sealed raw object read by range); decoders never assume which.
 */

const CHUNK_BYTES = 64 * 1024;

export function bufferByteSource(buffer: Buffer): ByteSource {
  return {
    size: buffer.length,
    read(start: number, end: number): Readable {
      const from = Math.max(0, Math.min(start, buffer.length));
      const to = Math.max(from, Math.min(end, buffer.length));
      // Chunks of at most 64 KiB, as a file stream would give: a consumer never sees one huge chunk.
      function* chunks() {
        for (let at = from; at < to; at += CHUNK_BYTES) yield buffer.subarray(at, Math.min(to, at + CHUNK_BYTES));
      }
      return Readable.from(chunks(), { objectMode: false });
    },
  };
}

/** A file's bytes; its size is read once, so a file that changes underneath is not supported. */
export function fileByteSource(path: string): ByteSource {
  const size = statSync(path).size;
  return {
    size,
    read(start: number, end: number): Readable {
      end = Math.min(end, size);
      if (end <= start) return Readable.from([], { objectMode: false });
      // createReadStream's `end` is inclusive.
      return createReadStream(path, { start, end: end - 1, highWaterMark: CHUNK_BYTES });
    },
  };
}

/** The first `n` bytes (fewer when the source is shorter). */
export async function readHead(source: ByteSource, n: number): Promise<Buffer> {
  const end = Math.min(n, source.size);
  if (end <= 0) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  for await (const chunk of source.read(0, end)) parts.push(chunk as Buffer);
  return Buffer.concat(parts).subarray(0, end);
}
