import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { ByteSource } from '../importSource.js';

/**
 * ByteSources over a plain file and over a buffer: the CLI, tests and benchmarks hand these to a
 * decoder; the pipeline gives its own over a sealed raw object.
 */
export function fileByteSource(path: string): ByteSource {
  const size = statSync(path).size;
  return {
    size,
    read(start, end) {
      const to = Math.min(end, size);
      // createReadStream's end is inclusive, and an empty range must still end.
      if (to <= start) return Readable.from([]);
      return createReadStream(path, { start, end: to - 1, highWaterMark: 256 * 1024 });
    },
  };
}

export function bufferByteSource(buf: Buffer): ByteSource {
  return {
    size: buf.length,
    read(start, end) {
      return Readable.from([buf.subarray(start, Math.min(end, buf.length))]);
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
