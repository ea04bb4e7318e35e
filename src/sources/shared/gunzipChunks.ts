import { createGunzip } from 'node:zlib';

/** The gzip stream is broken or cut short: the inflater's own words. */
export class GzipError extends Error {
  override name = 'GzipError';
}

/**
 * A gzip payload inflated chunk by chunk (at most `chunkSize` bytes each), so a parser holds one
 * chunk of a large upload at a time. A broken or truncated stream throws GzipError after the
 * chunks that inflated; stopping early releases the inflater.
 */
export async function* gunzipChunks(payload: Buffer, chunkSize = 64 * 1024): AsyncGenerator<Buffer> {
  const gunzip = createGunzip({ chunkSize });
  gunzip.end(payload);
  const chunks = gunzip[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw new GzipError(err instanceof Error ? err.message : String(err));
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    gunzip.destroy();
  }
}
